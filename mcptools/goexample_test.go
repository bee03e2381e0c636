package mcptools_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// goExample builds the go-sdk's examples/server/everything once per test
// binary, from the module cache (the version go.mod requires).
var goExample = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "mcptools-goex-")
	if err != nil {
		return "", err
	}
	goExampleDir.Store(dir) // removed by TestMain
	bin := filepath.Join(dir, "everything")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/examples/server/everything").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

var goExampleDir atomic.Value

func goExampleBin(t *testing.T) string {
	t.Helper()
	bin, err := goExample()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// checkGoExample lists the Go example server and calls tools whose names
// contain spaces and parentheses through their sanitised names.
func checkGoExample(t *testing.T, m *mcptools.Manager) {
	t.Helper()
	tools := toolsByName(t, m)
	for _, name := range []string{"goex_greet", "goex_greet_structured", "goex_greet_with_Icons", "goex_greet_content_with_ResourceLink"} {
		if tools[name] == nil {
			t.Fatalf("no tool %s in %v", name, keys(tools))
		}
	}
	if got := tools["goex_greet_structured"].Meta["mcp_tool"]; got != "greet (structured)" {
		t.Errorf("mcp_tool = %q", got)
	}
	if got, isErr := callText(t, tools["goex_greet"], &tool.Call{}, `{"name":"Ada"}`); isErr || !strings.Contains(got, "Ada") {
		t.Errorf("greet = %q", got)
	}
	res, err := tools["goex_greet_structured"].Handler(t.Context(), &tool.Call{}, json.RawMessage(`{"name":"Ada"}`))
	if err != nil || res.IsError || res.Artifact == nil {
		t.Errorf("greet (structured) = %q artifact=%v err=%v", resultText(res), res.Artifact, err)
	}
	if got, isErr := callText(t, tools["goex_greet_content_with_ResourceLink"], &tool.Call{}, `{"name":"Ada"}`); isErr || !strings.Contains(got, "[resource link") {
		t.Errorf("greet (content with ResourceLink) = %q", got)
	}
	st := statusByName(m)["goex"]
	if st.Renamed["greet (structured)"] != "goex_greet_structured" {
		t.Errorf("Renamed = %v", st.Renamed)
	}
}

func TestGoExampleServerStdio(t *testing.T) {
	t.Parallel()
	bin := goExampleBin(t)
	for _, pv := range []string{"", "latest"} { // 2025-11-25 first, and the 2026-07-28 handshake
		t.Run("protocol="+pv, func(t *testing.T) {
			ext := parseExt(t, `{"goex": `+stdioJSON(bin, nil, nil)+`}`)
			checkGoExample(t, newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), ProtocolVersion: pv}))
		})
	}
}

func TestGoExampleServerHTTP(t *testing.T) {
	t.Parallel()
	bin := goExampleBin(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "-http", addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("example server did not listen")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ext := parseExt(t, `{"goex": {"type": "http", "url": "http://`+addr+`/"}}`)
	checkGoExample(t, newManager(t, mcptools.Options{Extensions: mcptools.Static(ext)}))
}
