package mcptools_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// Close ends every session, process and goroutine the Manager started.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := newTestServer()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	ext := parseExt(t, `{
		"mem": `+memServerJSON("")+`,
		"web": {"type": "http", "url": "`+hs.URL+`"},
		"proc": `+fakeServerJSON(t, "serve", "")+`,
		"hung": `+fakeServerJSON(t, "hang", `"session_init_timeout": 0.3`)+`}`)
	m := mcptools.New(mcptools.Options{Extensions: mcptools.Static(ext), Dial: memServers{"mem": newTestServer()}.dial})
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Meta["mcp_tool"] == "echo" {
			callText(t, tl, &tool.Call{UserID: "u", ThreadID: "t"}, `{"message":"x"}`)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	hs.CloseClientConnections()
}
