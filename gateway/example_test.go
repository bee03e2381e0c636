package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/gateway"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/toolset"
	"github.com/antlerhq/antler/vpath"
)

// A gateway with a scripted model: stream one run and print its frames'
// names.
func Example() {
	home, _ := os.MkdirTemp("", "antler-gateway-example")
	defer os.RemoveAll(home)
	cfg, err := config.Parse("config.yaml", []byte("models:\n  - {name: m, use: example:model, model: scripted}\n"), nil)
	if err != nil {
		panic(err)
	}
	reg := toolset.NewRegistry()
	reg.RegisterModel(func(context.Context, *toolset.Env, config.Model) (model.ChatModel, error) {
		return modeltest.New(modeltest.Turn{Text: "Hello!"}), nil
	}, "example:model")
	st, _ := sqlite.OpenDir(home, sqlite.Options{})
	defer st.Close()
	layout, _ := vpath.New(vpath.Options{Home: home})
	gw, err := gateway.New(gateway.Options{Config: cfg, Store: st, Layout: layout,
		Factory: agent.FactoryOptions{Assembler: &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: cfg, Home: home}}}})
	if err != nil {
		panic(err)
	}
	defer gw.Close()
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()

	body := `{"input": {"messages": [{"type": "human", "content": "hi"}]}, "stream_mode": ["values", "messages-tuple"]}`
	resp, err := http.Post(srv.URL+"/api/langgraph/threads/t1/runs/stream", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			fmt.Print(name, " ")
		}
	}
	fmt.Println()
	// Output:
	// metadata values messages messages values end
}
