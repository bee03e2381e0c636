package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// TestE2EToolProgressGuard_blocksAToolAfterAnAuthFailure: with
// tool_progress enabled, an MCP tool that fails authentication is called
// once; the model's second call of it is answered "[TOOL_BLOCKED] ..."
// without reaching the server.
func TestE2EToolProgressGuard_blocksAToolAfterAnAuthFailure(t *testing.T) {
	var calls atomic.Int32
	s := mcp.NewServer(&mcp.Implementation{Name: "acct", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "login", Description: "Log in."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			calls.Add(1)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "401 Unauthorized: invalid api key"}}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)

	var second model.Message
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "acct_login", `{}`)}},
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c2", "acct_login", `{}`)}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			second = modeltest.LastMessage(req)
			return modeltest.Turn{Text: "cannot log in"}
		}})
	cfg, home := e2eConfig(t, srv.URL)
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Dir(cfg), "config.yaml", string(data)+"tool_progress:\n  enabled: true\n")
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"acct": map[string]any{"type": "http", "url": hs.URL}}})
	writeFile(t, filepath.Dir(cfg), "extensions_config.json", string(ext))
	if code, _, errOut := antlerProcess(t, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "log in"); code > 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the server was called %d times, want 1", n)
	}
	if want := "[TOOL_BLOCKED] Authentication failure — this tool cannot be used."; second.Content != want {
		t.Errorf("second tool message %q, want %q", second.Content, want)
	}
	if !strings.Contains(string(srv.Bodies()[1]), "401 Unauthorized") {
		t.Error("the first failure did not reach the model")
	}
}
