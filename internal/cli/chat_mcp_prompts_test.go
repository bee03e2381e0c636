package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/model/modeltest"
)

// startPromptMCP serves, over streamable HTTP on 127.0.0.1, the prompt
// "Review" (argument file, required).
func startPromptMCP(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "team", Version: "1"}, nil)
	s.AddPrompt(&mcp.Prompt{Name: "Review", Description: "Review a file.", Arguments: []*mcp.PromptArgument{{Name: "file", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Please review " + req.Params.Arguments["file"] + "."}}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// chat offers the MCP servers' prompts: /prompts lists them as commands,
// /team:review file=a.go (any case) sends the expansion to the model, and
// a missing argument or an unknown prompt is an error naming it, with
// nothing sent.
func TestChat_mcpPromptsAreSlashCommands(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{Func: echoLast})
	cfg, home := chatConfig(t, srv.URL)
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"team": map[string]any{"type": "http", "url": startPromptMCP(t)}}})
	writeFile(t, filepath.Dir(cfg), "extensions_config.json", string(ext))
	input := "/prompts\n/team:review\n/team:nope\n/team:review file=a.go\nexit\n"
	code, out, errOut := chatCLI(t, cfg, home, input, "--thread", "t1")
	if code != 0 {
		t.Fatalf("chat: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"/team:Review file=…",
		"Review a file.",
		"/team:Review: argument file is required (arguments: file required)",
		"no MCP prompt team:nope",
		"(prompt team:Review, 19 characters)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "Please review a.go.") || strings.Count(out, "saw:") != 1 {
		t.Errorf("the model got not exactly the expanded prompt:\n%s", out)
	}
}
