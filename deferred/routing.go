package deferred

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// ErrRoutingOrder is returned by the filter middleware when keyword
// routing is configured but the routing middleware did not run before it
// (the reference asserts the same order when it builds the chain).
var ErrRoutingOrder = errors.New("McpRoutingMiddleware must be installed before DeferredToolFilterMiddleware (routing auto-promotion would otherwise be filtered out)")

// defaultAutoPromoteTopK is how many routed tools are promoted when the
// configuration leaves auto_promote_top_k unset.
const defaultAutoPromoteTopK = 3

// routedKey is the ModelCall.Context key under which the routing
// middleware passes the routed names to the filter.
const routedKey = "deferred.routed"

// route is one tool's effective routing.
type route struct {
	tool     string
	priority int
	keywords []string // lowercased, non-empty
}

// Router is the keyword routing of one agent build (DeerFlow's tool_search.py and mcp_routing_middleware.py): MCP
// tools whose server or per-tool routing is {mode: prefer} with keywords
// are promoted for a model call when the latest real user message
// contains one of their keywords, case-insensitively; the best
// auto_promote_top_k by priority (then name) are promoted.
type Router struct {
	routes []route // by priority desc, then name
	topK   int
	hidden map[string]bool // routed tools that are deferred
}

// newRouter builds the routing of tools (MCP tools carrying
// Meta["mcp_server"] and Meta["mcp_tool"]) from the servers' routing in
// the extensions file. A tool's entry in its server's "tools" map
// overrides the fields it sets of the server's routing. topK is clamped
// to 1..5 (≤ 0: [defaultAutoPromoteTopK]). deferred lists the deferred
// tools (may be nil); it only changes the wording of the prompt hints.
// newRouter returns nil when no tool is routed.
func newRouter(tools []*tool.Tool, servers map[string]config.MCPServer, topK int, deferred *Catalog) *Router {
	if !anyRouting(servers) {
		return nil // without a routing or a per-tool override, no tool is routed
	}
	if topK <= 0 {
		topK = defaultAutoPromoteTopK
	}
	r := &Router{topK: min(max(topK, 1), 5), hidden: map[string]bool{}}
	for _, t := range tools {
		if t == nil || t.Name == "" {
			continue
		}
		srv, ok := servers[t.Meta["mcp_server"]]
		if !ok {
			continue
		}
		rt := effectiveRouting(srv, cmp.Or(t.Meta["mcp_tool"], t.Name))
		if rt.Mode != "prefer" {
			continue
		}
		var kws []string
		for _, k := range rt.Keywords {
			if k = strings.ToLower(strings.TrimSpace(k)); k != "" && !slices.Contains(kws, k) {
				kws = append(kws, k)
			}
		}
		if len(kws) == 0 {
			continue
		}
		r.routes = append(r.routes, route{tool: t.Name, priority: min(max(rt.Priority, 0), 100), keywords: kws})
		if deferred != nil && deferred.Has(t.Name) {
			r.hidden[t.Name] = true
		}
	}
	if len(r.routes) == 0 {
		return nil
	}
	slices.SortFunc(r.routes, func(a, b route) int {
		return cmp.Or(cmp.Compare(b.priority, a.priority), cmp.Compare(a.tool, b.tool))
	})
	return r
}

// anyRouting reports whether some server sets a routing or per-tool
// entries (which may set one): otherwise newRouter need not look at the
// tools, which costs a run hundreds of microseconds at 10,000 tools.
func anyRouting(servers map[string]config.MCPServer) bool {
	for _, srv := range servers {
		if srv.Routing != nil || len(srv.Tools) > 0 {
			return true
		}
	}
	return false
}

// effectiveRouting is the server's routing with the fields set by the
// tool's override ({"routing": {...}} under the server's "tools") applied.
func effectiveRouting(srv config.MCPServer, toolName string) config.Routing {
	var rt config.Routing
	if srv.Routing != nil {
		rt = *srv.Routing
		rt.Keywords = slices.Clone(rt.Keywords)
	}
	raw, ok := srv.Tools[toolName]
	if !ok {
		return rt
	}
	var over struct {
		Routing *struct {
			Mode     *string   `json:"mode"`
			Priority *int      `json:"priority"`
			Keywords *[]string `json:"keywords"`
		} `json:"routing"`
	}
	if json.Unmarshal(raw, &over) != nil || over.Routing == nil {
		return rt
	}
	if o := over.Routing; o.Mode != nil {
		rt.Mode = *o.Mode
	}
	if o := over.Routing; o.Priority != nil {
		rt.Priority = *o.Priority
	}
	if o := over.Routing; o.Keywords != nil {
		rt.Keywords = *o.Keywords
	}
	return rt
}

// Match returns the tools routed for messages: those with a keyword in
// the latest real user message, by priority then name, at most topK.
func (r *Router) Match(messages []model.Message) []string {
	if r == nil {
		return nil
	}
	text := strings.ToLower(latestUserText(messages))
	if text == "" {
		return nil
	}
	var out []string
	for _, rt := range r.routes {
		for _, k := range rt.keywords {
			if strings.Contains(text, k) {
				out = append(out, rt.tool)
				break
			}
		}
		if len(out) == r.topK {
			break
		}
	}
	return out
}

// latestUserText is the text of the last user message that a person
// wrote: messages whose Meta marks them "hidden" or "synthetic" (text a
// middleware injected) are skipped.
func latestUserText(messages []model.Message) string {
	for i := len(messages) - 1; i >= 0; i-- {
		m := &messages[i]
		if m.Role != model.RoleUser || m.Meta["hidden"] == true || m.Meta["synthetic"] == true {
			continue
		}
		if m.Content != "" {
			return m.Content
		}
		var b strings.Builder
		for _, p := range m.Parts {
			if p.Type == model.PartText || p.Text != "" {
				b.WriteString(p.Text)
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	return ""
}

// Middleware returns the routing model middleware: it computes the
// routed tools of the call's state and hands them to the filter
// middleware, which must come after it, through the call's Context.
// A model middleware cannot write thread state, so routed tools are
// promoted for each model call of the turn (the filter exposes them and
// the tool guard lets their calls through) rather than persisted; a
// later tool_search persists promotions as usual.
func (r *Router) Middleware() tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if call == nil || call.Request == nil {
				return next(ctx, call)
			}
			routed := r.Match(call.Request.Messages)
			c := *call
			c.Context = maps.Clone(call.Context)
			if c.Context == nil {
				c.Context = map[string]any{}
			}
			c.Context[routedKey] = routed
			return next(ctx, &c)
		}
	}
}

// routedForState is what the tool guard lets through: the tools routed
// for the thread's messages.
func (r *Router) routedForState(st *thread.State) []string {
	if r == nil || st == nil {
		return nil
	}
	return r.Match(st.Messages)
}

// PromptSection returns the <mcp_routing_hints> block: for each routed
// tool, by priority then name,
//
//	When the user's request involves a, b, or c:
//	  use `tool_search` to fetch `X`, then prefer that MCP tool.
//
// (or "  prefer the `X` tool." when X is not deferred). It returns ""
// for a nil Router.
func (r *Router) PromptSection() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("<mcp_routing_hints>\n")
	for _, rt := range r.routes {
		b.WriteString("When the user's request involves ")
		b.WriteString(orList(rt.keywords))
		b.WriteString(":\n")
		if r.hidden[rt.tool] {
			b.WriteString("  use `" + ToolSearchName + "` to fetch `" + rt.tool + "`, then prefer that MCP tool.\n")
		} else {
			b.WriteString("  prefer the `" + rt.tool + "` tool.\n")
		}
	}
	b.WriteString("</mcp_routing_hints>")
	return b.String()
}

// orList joins words as "a", "a or b", "a, b, or c".
func orList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	case 2:
		return words[0] + " or " + words[1]
	}
	return strings.Join(words[:len(words)-1], ", ") + ", or " + words[len(words)-1]
}
