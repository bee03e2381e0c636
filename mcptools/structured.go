package mcptools

import "github.com/antlerhq/antler/tool"

// StructuredContent returns the structuredContent of the result of an MCP
// tool of this package (kept in the result's artifact); ok is false when
// the server sent none. Package mcptasks reads the submit, status and
// cancel answers of task toolsets with it.
func StructuredContent(r *tool.Result) (v any, ok bool) {
	if r == nil {
		return nil, false
	}
	m, isMap := r.Artifact.(map[string]any)
	if !isMap {
		return nil, false
	}
	v, ok = m[structuredContentKey]
	return v, ok && v != nil
}
