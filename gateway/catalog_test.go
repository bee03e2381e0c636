package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
)

// TestListTools_badAgentArgumentIs422: an agent argument that is not an
// agent name is the caller's mistake (422 naming the argument), not a
// server failure; an unknown but well-formed name is 404.
func TestListTools_badAgentArgumentIs422(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, c := range []struct {
		name, agent string
		want        int
	}{
		{"traversal", "../../etc", 422},
		{"absolute path", "/etc/passwd", 422},
		{"dot dot", "..", 422},
		{"slash", "a/b", 422},
		{"backslash", `a\b`, 422},
		{"space", "my agent", 422},
		{"underscore", "my_agent", 422},
		{"NUL byte", "a\x00b", 422},
		{"unicode", "agënt", 422},
		{"unknown but valid", "nobody-here", 404},
		{"empty is the lead agent", "", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := e.do("GET", "/api/tools?"+url.Values{"agent": {c.agent}}.Encode(), "", nil)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.want, body)
			}
			if c.want != 422 {
				return
			}
			var out struct {
				Detail string `json:"detail"`
			}
			if err := json.Unmarshal(body, &out); err != nil {
				t.Fatalf("answer %s: %v", body, err)
			}
			if !strings.Contains(out.Detail, "agent") || !strings.Contains(out.Detail, "Must match pattern") {
				t.Errorf("detail %q does not name the agent argument and its rule", out.Detail)
			}
		})
	}
}

// TestListTools_mcpAnnotations: GET /api/tools keeps each MCP tool's
// title and the hints its server stated, as `tools list --json` shows
// them; a hint left out stays absent, and a tool stating none has no
// annotations key.
func TestListTools_mcpAnnotations(t *testing.T) {
	no, yes := false, true
	srv := mcp.NewServer(&mcp.Implementation{Name: "ann", Version: "1"}, nil)
	handler := func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "look", Description: "Looks.", Title: "Look around",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}}, handler)
	mcp.AddTool(srv, &mcp.Tool{Name: "wipe", Description: "Wipes.",
		Annotations: &mcp.ToolAnnotations{Title: "Wipe it", DestructiveHint: &yes, IdempotentHint: true}}, handler)
	mcp.AddTool(srv, &mcp.Tool{Name: "plain", Description: "States nothing."}, handler)
	dial := func(ctx context.Context, s config.MCPServer) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	e := newEnv(t, envOptions{dial: dial, extensions: `{"mcpServers": {"ann": {"enabled": true, "type": "http", "url": "http://127.0.0.1:1/unused"}}, "skills": {}}`})
	var tools []map[string]any
	e.json("GET", "/api/tools", "", nil, 200, &tools)
	got := map[string]any{}
	for _, tl := range tools {
		if name := tl["name"].(string); strings.HasPrefix(name, "ann_") {
			got[name] = tl["annotations"]
		}
	}
	want := map[string]any{
		"ann_look":  map[string]any{"title": "Look around", "readOnlyHint": true, "idempotentHint": false, "openWorldHint": false},
		"ann_wipe":  map[string]any{"title": "Wipe it", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": true},
		"ann_plain": nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations by tool (-want +got):\n%s", diff)
	}
}
