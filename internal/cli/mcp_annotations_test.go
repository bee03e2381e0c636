package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// annotatedConfig is a config whose extensions file has the MCP server
// "notes" over streamable HTTP on 127.0.0.1: "search" titled and
// read-only in a closed world, "wipe" destructive, "plain" stating
// nothing.
func annotatedConfig(t *testing.T) (cfg, ext string) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	yes, no := true, false
	h := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	obj := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "search", Title: "Search notes", Description: "Find notes.", InputSchema: obj,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}}, h)
	s.AddTool(&mcp.Tool{Name: "wipe", Description: "Delete every note.", InputSchema: obj,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}}, h)
	s.AddTool(&mcp.Tool{Name: "plain", Description: "Nothing stated.", InputSchema: obj}, h)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	cfg, _ = e2eConfig(t, "http://127.0.0.1:1/unused")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"type": "http", "url": hs.URL}}})
	ext = writeFile(t, filepath.Dir(cfg), "extensions_config.json", string(data))
	return cfg, ext
}

// `tools list --json` carries each MCP tool's title and the hints its
// server states; a hint left out, and a tool stating nothing, has none.
func TestToolsList_jsonShowsMCPAnnotations(t *testing.T) {
	cfg, _ := annotatedConfig(t)
	code, out, errOut := runCLI(t, nil, "--config", cfg, "tools", "list", "--json")
	if code != 0 {
		t.Fatalf("tools list: exit %d: %s", code, errOut)
	}
	var tools []struct {
		Name        string          `json:"name"`
		Annotations json.RawMessage `json:"annotations"`
	}
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("%v in:\n%s", err, out)
	}
	got := map[string]string{}
	for _, tl := range tools {
		var b bytes.Buffer
		if len(tl.Annotations) > 0 {
			if err := json.Compact(&b, tl.Annotations); err != nil {
				t.Fatal(err)
			}
		}
		got[tl.Name] = b.String()
	}
	want := map[string]string{
		"notes_search": `{"title":"Search notes","readOnlyHint":true,"idempotentHint":false,"openWorldHint":false}`,
		"notes_wipe":   `{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false}`,
		"notes_plain":  "",
		"write_file":   "",
		"read_file":    "",
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			delete(got, name) // built-ins
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

// `antler mcp get` shows each tool's hints and its title.
func TestMCPGet_showsAnnotations(t *testing.T) {
	_, ext := annotatedConfig(t)
	code, out, errOut := runCLI(t, nil, "--extensions", ext, "mcp", "get", "notes", "--width", "200")
	if code != 0 {
		t.Fatalf("mcp get: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`(?m)^notes_search +read-only, closed world +Search notes — Find notes\.$`,
		`(?m)^notes_wipe +destructive +Delete every note\.$`,
		`(?m)^notes_plain +- +Nothing stated\.$`,
		`(?m)^TOOL +HINTS +DESCRIPTION$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line matching %s in:\n%s", want, out)
		}
	}
}
