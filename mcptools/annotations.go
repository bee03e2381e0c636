package mcptools

import (
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/tool"
)

// toolMeta returns the Meta labels of one listed tool: its server, its
// own name, the transport, its title (the tool's, else its annotations'),
// and the annotations the server states (tool.MetaMCPAnnotationPrefix +
// "destructiveHint" is "true" or "false"), which the tool policy
// matches. An annotation the listing leaves out gets no key; the policy
// applies the MCP specification's default. readOnlyHint and
// idempotentHint have no "absent" in the SDK's type, so a stated
// annotations object always carries them.
func toolMeta(server, raw, transport string, t *mcp.Tool) map[string]string {
	// The source label is set here so that the assembler, which labels
	// every bound tool by source, does not copy each MCP tool per list.
	meta := map[string]string{MetaServer: server, MetaTool: raw, MetaTransport: transport, tool.MetaSource: "mcp"}
	a := t.Annotations
	title := t.Title
	if title == "" && a != nil {
		title = a.Title
	}
	if title != "" {
		meta[tool.MetaMCPAnnotationPrefix+"title"] = title
	}
	if a == nil {
		return meta
	}
	meta[tool.MetaMCPAnnotationPrefix+"readOnlyHint"] = strconv.FormatBool(a.ReadOnlyHint)
	meta[tool.MetaMCPAnnotationPrefix+"idempotentHint"] = strconv.FormatBool(a.IdempotentHint)
	if a.DestructiveHint != nil {
		meta[tool.MetaMCPAnnotationPrefix+"destructiveHint"] = strconv.FormatBool(*a.DestructiveHint)
	}
	if a.OpenWorldHint != nil {
		meta[tool.MetaMCPAnnotationPrefix+"openWorldHint"] = strconv.FormatBool(*a.OpenWorldHint)
	}
	return meta
}

// Annotations are the annotations an MCP tool's server stated, as
// `tools list --json` and `antler mcp get` show them: a hint the server
// left out is nil (the MCP specification's default then applies: not
// read-only, destructive, not idempotent, open world).
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// AnnotationsOf reads the annotations from a tool's Meta (see toolMeta);
// nil when it states none (a tool of another source, or an MCP tool
// without title or annotations).
func AnnotationsOf(meta map[string]string) *Annotations {
	var a Annotations
	stated := false
	hint := func(k string) *bool {
		v, ok := meta[tool.MetaMCPAnnotationPrefix+k]
		if !ok {
			return nil
		}
		stated = true
		b := v == "true"
		return &b
	}
	a.ReadOnlyHint, a.DestructiveHint = hint("readOnlyHint"), hint("destructiveHint")
	a.IdempotentHint, a.OpenWorldHint = hint("idempotentHint"), hint("openWorldHint")
	if t, ok := meta[tool.MetaMCPAnnotationPrefix+"title"]; ok {
		a.Title, stated = t, true
	}
	if !stated {
		return nil
	}
	return &a
}

// Hints names the hints stated true, and "not destructive" and "closed
// world" for the two whose default is true, for a table: "read-only,
// idempotent"; "" when none is stated.
func (a *Annotations) Hints() string {
	if a == nil {
		return ""
	}
	var out []string
	is := func(p *bool) bool { return p != nil && *p }
	isNot := func(p *bool) bool { return p != nil && !*p }
	if is(a.ReadOnlyHint) {
		out = append(out, "read-only")
	}
	if is(a.DestructiveHint) && !is(a.ReadOnlyHint) {
		out = append(out, "destructive")
	} else if isNot(a.DestructiveHint) && !is(a.ReadOnlyHint) {
		out = append(out, "not destructive")
	}
	if is(a.IdempotentHint) {
		out = append(out, "idempotent")
	}
	if isNot(a.OpenWorldHint) {
		out = append(out, "closed world")
	} else if is(a.OpenWorldHint) {
		out = append(out, "open world")
	}
	return strings.Join(out, ", ")
}
