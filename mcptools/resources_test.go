package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// docsServer is an MCP server with tools and two resources, a text and
// a PNG blob.
func docsServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "docs://readme", Name: "readme", Description: "The readme.", MIMEType: "text/markdown"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: "# Hello"}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "docs://logo", Name: "logo", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: []byte("\x89PNG")}}}, nil
		})
	return srv
}

// plainServer has a tool and no resources.
func plainServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	return srv
}

// TestResourceTools: with a server stating the resources capability,
// list_mcp_resources and read_mcp_resource are bound (labelled as MCP
// tools that only read); the list names each resource's server, a read
// returns the text, or the blob as an image block; an unknown server or
// URI is an error result.
func TestResourceTools(t *testing.T) {
	ext := parseExt(t, `{"docs": `+memServerJSON("")+`, "plain": `+memServerJSON("")+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), Dial: memServers{"docs": docsServer(), "plain": plainServer()}.dial})
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"docs_noop", "plain_noop", "list_mcp_resources", "read_mcp_resource"}, names(tools)); diff != "" {
		t.Fatalf("names (-want +got):\n%s", diff)
	}
	list, read := tools[2], tools[3]
	if list.Meta[tool.MetaSource] != "mcp" || list.Meta[tool.MetaMCPAnnotationPrefix+"readOnlyHint"] != "true" || !strings.Contains(list.Description, "500") {
		t.Errorf("list_mcp_resources: meta %v, description %q", list.Meta, list.Description)
	}
	call := func(tl *tool.Tool, args string) *tool.Result {
		t.Helper()
		res, err := tl.Handler(t.Context(), &tool.Call{ID: "c1"}, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	var listed []map[string]any
	if err := json.Unmarshal([]byte(resultText(call(list, `{}`))), &listed); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"server": "docs", "uri": "docs://logo", "name": "logo", "mimeType": "image/png"},
		{"server": "docs", "uri": "docs://readme", "name": "readme", "description": "The readme.", "mimeType": "text/markdown"},
	}
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	if res := call(read, `{"server":"docs","uri":"docs://readme"}`); res.IsError || resultText(res) != "# Hello" {
		t.Errorf("read readme: %q (error %v)", resultText(res), res.IsError)
	}
	if res := call(read, `{"server":"docs","uri":"docs://logo"}`); res.IsError || len(res.Content) != 1 || res.Content[0].Type != tool.BlockImage {
		t.Errorf("read logo: %+v", res)
	}
	for _, tt := range []struct{ name, args, want string }{
		{"server without resources", `{"server":"plain","uri":"x"}`, "offers no resources; servers with resources: docs"},
		{"unknown uri", `{"server":"docs","uri":"docs://nope"}`, "MCP server 'docs'"},
		{"missing uri", `{"server":"docs"}`, "needs both server and uri"},
	} {
		if res := call(read, tt.args); !res.IsError || !strings.Contains(resultText(res), tt.want) {
			t.Errorf("%s: %q (error %v), want an error with %q", tt.name, resultText(res), res.IsError, tt.want)
		}
	}
	if res := call(list, `{"server":"plain"}`); !res.IsError {
		t.Errorf("list of a server without resources: %q", resultText(res))
	}
	for _, args := range []string{`null`, `[]`, `"docs"`} {
		for _, tl := range []*tool.Tool{list, read} {
			if res := call(tl, args); !res.IsError || !strings.Contains(resultText(res), "must be a JSON object") {
				t.Errorf("%s(%s): %q (error %v), want the arguments refused", tl.Name, args, resultText(res), res.IsError)
			}
		}
	}
}

// TestResourceTools_absentWithoutResources: no server states resources,
// no resource tools.
func TestResourceTools_absentWithoutResources(t *testing.T) {
	ext := parseExt(t, `{"plain": `+memServerJSON("")+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), Dial: memServers{"plain": plainServer()}.dial})
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"plain_noop"}, names(tools)); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
