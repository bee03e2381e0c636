package mcptools

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/tool"
)

// structuredContentKey is the key of the artifact map that holds a
// result's structuredContent, as DeerFlow stores it.
const structuredContentKey = "structured_content"

// convertResult turns an MCP tool result into an Antler result: text stays
// text, images (and embedded image blobs) become image blocks, audio and
// other embedded blobs become binary blocks (the agent's tool-output
// budget saves both kinds to files; see docs/differences.md, "Tool
// output budget"), resource links and embedded text resources become
// text, structuredContent becomes the artifact
// {"structured_content": ...}, and isError becomes an error result whose
// text starts with "Error: ".
func convertResult(r *mcp.CallToolResult) *tool.Result {
	if r == nil {
		return tool.Text("")
	}
	out := &tool.Result{}
	for _, c := range r.Content {
		if b, ok := convertContent(c); ok {
			out.Content = append(out.Content, b)
		}
	}
	if r.StructuredContent != nil {
		out.Artifact = map[string]any{structuredContentKey: r.StructuredContent}
	}
	if r.IsError {
		var texts []string
		for _, b := range out.Content {
			if b.Type == tool.BlockText && b.Text != "" {
				texts = append(texts, b.Text)
			}
		}
		msg := strings.Join(texts, "\n")
		if msg == "" {
			msg = "the MCP tool reported an error without a message"
		}
		e := tool.Errorf("%s", msg)
		e.Artifact = out.Artifact
		return e
	}
	return out
}

func convertContent(c mcp.Content) (tool.Block, bool) {
	switch c := c.(type) {
	case *mcp.TextContent:
		return tool.Block{Type: tool.BlockText, Text: c.Text}, true
	case *mcp.ImageContent:
		return tool.Block{Type: tool.BlockImage, MIMEType: c.MIMEType, Data: c.Data}, true
	case *mcp.AudioContent:
		return tool.Block{Type: tool.BlockBinary, MIMEType: cmp.Or(c.MIMEType, "application/octet-stream"), Data: c.Data}, true
	case *mcp.ResourceLink:
		return textBlock("%s", describeLink(c)), true
	case *mcp.EmbeddedResource:
		return convertResource(c.Resource)
	}
	return tool.Block{}, false
}

func describeLink(c *mcp.ResourceLink) string {
	var b strings.Builder
	b.WriteString("[resource link")
	if name := cmp.Or(c.Title, c.Name); name != "" {
		fmt.Fprintf(&b, " %q", name)
	}
	fmt.Fprintf(&b, ": %s", c.URI)
	if c.MIMEType != "" {
		fmt.Fprintf(&b, " (%s)", c.MIMEType)
	}
	b.WriteString("]")
	if c.Description != "" {
		b.WriteString(" " + c.Description)
	}
	return b.String()
}

func convertResource(r *mcp.ResourceContents) (tool.Block, bool) {
	if r == nil {
		return tool.Block{}, false
	}
	switch {
	case r.Text != "" || r.Blob == nil:
		return tool.Block{Type: tool.BlockText, Text: r.Text}, true
	case strings.HasPrefix(r.MIMEType, "image/"):
		return tool.Block{Type: tool.BlockImage, MIMEType: r.MIMEType, Data: r.Blob}, true
	}
	return tool.Block{Type: tool.BlockBinary, MIMEType: cmp.Or(r.MIMEType, "application/octet-stream"), Data: r.Blob, URI: r.URI}, true
}

func textBlock(format string, args ...any) tool.Block {
	return tool.Block{Type: tool.BlockText, Text: fmt.Sprintf(format, args...)}
}
