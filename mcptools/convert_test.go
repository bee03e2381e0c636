package mcptools_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// Every content type of an MCP result keeps its bytes: images as image
// blocks, audio and embedded blobs as binary blocks (the agent's budget
// saves both to files), text, links and embedded text as text.
func TestConvertResult_everyContentType(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n....")
	wav := []byte("RIFF....WAVE")
	r := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "t"},
		&mcp.ImageContent{MIMEType: "image/png", Data: png},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: wav},
		&mcp.AudioContent{Data: wav},
		&mcp.ResourceLink{URI: "file:///x.txt", Name: "x.txt"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://text", Text: "embedded"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://img", MIMEType: "image/png", Blob: png}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://doc", MIMEType: "application/pdf", Blob: []byte("%PDF")}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://raw", Blob: []byte{0, 1}}},
	}, StructuredContent: map[string]any{"k": 1}}
	got := mcptools.ConvertResult(r)
	want := []tool.Block{
		{Type: tool.BlockText, Text: "t"},
		{Type: tool.BlockImage, MIMEType: "image/png", Data: png},
		{Type: tool.BlockBinary, MIMEType: "audio/wav", Data: wav},
		{Type: tool.BlockBinary, MIMEType: "application/octet-stream", Data: wav},
		{Type: tool.BlockText, Text: `[resource link "x.txt": file:///x.txt]`},
		{Type: tool.BlockText, Text: "embedded"},
		{Type: tool.BlockImage, MIMEType: "image/png", Data: png},
		{Type: tool.BlockBinary, MIMEType: "application/pdf", Data: []byte("%PDF"), URI: "mem://doc"},
		{Type: tool.BlockBinary, MIMEType: "application/octet-stream", Data: []byte{0, 1}, URI: "mem://raw"},
	}
	if diff := cmp.Diff(want, got.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"structured_content": map[string]any{"k": 1}}, got.Artifact); diff != "" {
		t.Errorf("artifact (-want +got):\n%s", diff)
	}
}
