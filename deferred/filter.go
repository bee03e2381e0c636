package deferred

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// notPromotedError is the text of the result of a call to a deferred tool
// that tool_search has not promoted (DeerFlow's wording).
func notPromotedError(name string) string {
	return fmt.Sprintf("Error: Tool '%s' is deferred and has not been promoted yet. Call tool_search first to expose and promote this tool's schema, then retry.", name)
}

// FilterModel returns the model middleware that removes the definitions
// of deferred, unpromoted tools from each model request. Promotions are
// read from the call's state and count only under this catalogue's hash.
// Tools that are not in the catalogue are never touched.
//
// Promotions only ever append: the request lists the tools that are not
// deferred in their bound order, then the promoted ones in the order they
// were promoted, so a promotion adds definitions after the ones the
// previous request sent and the prefix a provider caches stays the same
// (docs/design.md, "Promotions only append to the tool list").
func (c *Catalog) FilterModel() tool.ModelMiddleware { return c.filterModel(nil) }

// filterModel is FilterModel that also exposes the tools the routing
// middleware of r (which must run before it) routed for this call; they
// come last, after the promoted tools, since they last for one turn.
func (c *Catalog) filterModel(r *Router) tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if call == nil || call.Request == nil {
				return next(ctx, call)
			}
			var routed []string
			if r != nil {
				v, ok := call.Context[routedKey]
				if !ok {
					return nil, ErrRoutingOrder
				}
				routed, _ = v.([]string)
			}
			if !slices.ContainsFunc(call.Request.Tools, func(d model.ToolDefinition) bool { return c.Has(d.Name) }) {
				return next(ctx, call)
			}
			req := *call.Request // the messages are shared, not copied
			req.Tools = c.appendOnlyTools(call.Request.Tools, call.State, routed)
			filtered := *call
			filtered.Request = &req
			return next(ctx, &filtered)
		}
	}
}

// appendOnlyTools returns the definitions a request sends: those of
// tools outside the catalogue in their order, then the promoted tools in
// promotion order, then the routed ones not promoted. It makes one pass
// over defs whatever the catalogue's size.
func (c *Catalog) appendOnlyTools(defs []model.ToolDefinition, st *thread.State, routed []string) []model.ToolDefinition {
	var shown []string
	if st != nil && st.Promoted != nil && st.Promoted.CatalogHash == c.idx.hash {
		shown = st.Promoted.Names
	}
	slot := make(map[string]int, len(shown)+len(routed))
	for _, n := range slices.Concat(shown, routed) {
		if _, dup := slot[n]; !dup && c.Has(n) {
			slot[n] = len(slot)
		}
	}
	picked := make([]model.ToolDefinition, len(slot))
	found := make([]bool, len(slot))
	out := make([]model.ToolDefinition, 0, max(len(defs)-c.Len(), 0)+len(slot))
	for _, d := range defs {
		if !c.Has(d.Name) {
			out = append(out, d)
		} else if i, ok := slot[d.Name]; ok {
			picked[i], found[i] = d, true
		}
	}
	for i, d := range picked {
		if found[i] {
			out = append(out, d)
		}
	}
	return out
}

// GuardTools returns the tool middleware that answers a call to a
// deferred, unpromoted tool with DeerFlow's error ("Error: Tool 'x' is
// deferred and has not been promoted yet. ...") instead of running it. The executor still holds every tool; only the call is refused.
func (c *Catalog) GuardTools() tool.Middleware { return c.guardTools(nil) }

// guardTools is GuardTools that also lets through the tools r routes for
// the thread's latest real user message.
func (c *Catalog) guardTools(r *Router) tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			if call != nil && c.IsHidden(call.State, call.Name) && !slices.Contains(r.routedForState(call.State), call.Name) {
				return tool.Errorf("%s", notPromotedError(call.Name)), nil
			}
			return next(ctx, call, args)
		}
	}
}
