package mcptools_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// TestTools_carryTheServersAnnotations: the annotations a server states in
// its tool list reach the tool's Meta for the tool policy; one it leaves
// out gets no key. Every tool carries its server and the source label.
func TestTools_carryTheServersAnnotations(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ann", Version: "1"}, nil)
	no := false
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "delete_all", InputSchema: map[string]any{"type": "object"}}, handler)
	srv.AddTool(&mcp.Tool{Name: "list", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}}, handler)
	srv.AddTool(&mcp.Tool{Name: "append", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, IdempotentHint: true}}, handler)
	ext := &config.Extensions{MCPServers: map[string]config.MCPServer{"ann": {Name: "ann", Enabled: true, Type: "http", URL: "http://127.0.0.1:1/"}}}
	m := mcptools.New(mcptools.Options{
		Extensions: mcptools.Static(ext),
		Dial: func(ctx context.Context, _ config.MCPServer) (mcp.Transport, error) {
			client, server := mcp.NewInMemoryTransports()
			_, err := srv.Connect(ctx, server, nil)
			return client, err
		},
	})
	defer m.Close()
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, tl := range tools {
		ann := map[string]string{}
		for _, k := range []string{"destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint"} {
			if v, ok := tl.Meta[tool.MetaMCPAnnotationPrefix+k]; ok {
				ann[k] = v
			}
		}
		if tl.Meta[tool.MetaMCPServer] != "ann" {
			t.Errorf("%s: server %q", tl.Name, tl.Meta[tool.MetaMCPServer])
		}
		// Labelled at the source, so the assembler need not copy the tool.
		if tl.Meta[tool.MetaSource] != "mcp" {
			t.Errorf("%s: source %q, want mcp", tl.Name, tl.Meta[tool.MetaSource])
		}
		got[tl.Meta[mcptools.MetaTool]] = ann
	}
	want := map[string]map[string]string{
		"delete_all": {},
		"list":       {"readOnlyHint": "true", "idempotentHint": "false", "openWorldHint": "false"},
		"append":     {"readOnlyHint": "false", "idempotentHint": "true", "destructiveHint": "false"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

// TestAnnotationsOf: a tool's title (its own, else its annotations') and
// the hints its server stated are read back from Meta for the listings;
// a hint left out stays nil, and a tool stating nothing has none.
func TestAnnotationsOf(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ann", Version: "1"}, nil)
	yes, no := true, false
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "plain", InputSchema: map[string]any{"type": "object"}}, handler)
	srv.AddTool(&mcp.Tool{Name: "list", Title: "List things", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{Title: "ignored: the tool's own title wins", ReadOnlyHint: true, OpenWorldHint: &no}}, handler)
	srv.AddTool(&mcp.Tool{Name: "wipe", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{Title: "Wipe", DestructiveHint: &yes}}, handler)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(parseExt(t, `{"ann": `+memServerJSON("")+`}`)), Dial: memServers{"ann": srv}.dial})
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcptools.Annotations{}
	hints := map[string]string{}
	for _, tl := range tools {
		a := mcptools.AnnotationsOf(tl.Meta)
		got[tl.Meta[mcptools.MetaTool]], hints[tl.Meta[mcptools.MetaTool]] = a, a.Hints()
	}
	want := map[string]*mcptools.Annotations{
		"plain": nil,
		"list":  {Title: "List things", ReadOnlyHint: &yes, IdempotentHint: &no, OpenWorldHint: &no},
		"wipe":  {Title: "Wipe", ReadOnlyHint: &no, IdempotentHint: &no, DestructiveHint: &yes},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	wantHints := map[string]string{"plain": "", "list": "read-only, closed world", "wipe": "destructive"}
	if diff := cmp.Diff(wantHints, hints); diff != "" {
		t.Errorf("hints (-want +got):\n%s", diff)
	}
}
