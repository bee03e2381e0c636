package deferred

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/antlerhq/antler/model"
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
func (c *Catalog) FilterModel() tool.ModelMiddleware { return c.filterModel(nil) }

// filterModel is FilterModel that also exposes the tools the routing
// middleware of r (which must run before it) routed for this call.
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
			hidden := func(name string) bool {
				return c.IsHidden(call.State, name) && !slices.Contains(routed, name)
			}
			if !slices.ContainsFunc(call.Request.Tools, func(d model.ToolDefinition) bool { return hidden(d.Name) }) {
				return next(ctx, call)
			}
			req := call.Request.Clone()
			kept := req.Tools[:0]
			for _, d := range req.Tools {
				if !hidden(d.Name) {
					kept = append(kept, d)
				}
			}
			req.Tools = kept
			filtered := *call
			filtered.Request = req
			return next(ctx, &filtered)
		}
	}
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
