package mcptools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/mcptools"
)

// promptServer has the prompt "review" (argument file, required) and a
// tool.
func promptServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "p", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "review", Description: "Review a file.", Arguments: []*mcp.PromptArgument{{Name: "file", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Review " + req.Params.Arguments["file"] + "."}},
				{Role: "user", Content: &mcp.TextContent{Text: "Be brief."}},
			}}, nil
		})
	return srv
}

// TestPrompts: the prompts of servers stating the capability are listed
// with their arguments (a server without prompts adds none), and a
// prompt expands to its messages' texts; a missing argument or an
// unknown prompt is an error with the server's words.
func TestPrompts(t *testing.T) {
	ext := parseExt(t, `{"p": `+memServerJSON("")+`, "plain": `+memServerJSON("")+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), Dial: memServers{"p": promptServer(), "plain": plainServer()}.dial})
	got, err := m.Prompts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []mcptools.Prompt{{Server: "p", Name: "review", Description: "Review a file.", Arguments: []mcptools.PromptArgument{{Name: "file", Required: true}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	text, err := m.GetPrompt(t.Context(), "p", "review", map[string]string{"file": "a.go"})
	if err != nil || text != "Review a.go.\n\nBe brief." {
		t.Errorf("GetPrompt = %q, %v", text, err)
	}
	if _, err := m.GetPrompt(t.Context(), "p", "nope", nil); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown prompt: %v", err)
	}
}
