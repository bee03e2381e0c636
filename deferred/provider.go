package deferred

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// This file is deferral through the provider's own tool search
// (tool_search.provider_search with a model that implements
// model.ToolSearcher, Anthropic's): every request binds every tool, the
// deferred ones marked DeferLoading, plus the provider's search tool; the
// provider loads what its search returns. The tool list never changes
// within a catalogue, so the prompt's cached prefix survives every
// search. No tool_search is bound and no promotion is written: the
// references the provider's searches returned, kept on the assistant
// messages, are what lets the guard pass a call.

// SetupProviderSearch is SetupRouted for the provider's own search:
// variant is model.ToolSearchRegex or model.ToolSearchBM25. The
// returned Deferred has no ToolSearch tool, no prompt section and no
// keyword routing (its hints name tool_search).
func (cc *CatalogCache) SetupProviderSearch(tools []*tool.Tool, cfg config.ToolSearch, variant string) (*Deferred, error) {
	if !cfg.Enabled || len(tools) == 0 {
		return nil, nil
	}
	if err := checkVariant(variant); err != nil {
		return nil, err
	}
	c := cc.Catalog(tools)
	if c.Len() == 0 {
		return nil, ErrFailClosed
	}
	return &Deferred{Catalog: c, ProviderSearch: variant, FilterModel: c.markDeferred(variant), GuardTools: c.guardReferenced()}, nil
}

// markDeferred is the model middleware of provider search: the
// catalogue's tools go out with DeferLoading set, in their bound order,
// and the request asks for the provider's search.
func (c *Catalog) markDeferred(variant string) tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if call == nil || call.Request == nil {
				return next(ctx, call)
			}
			req := *call.Request
			req.ProviderToolSearch = variant
			req.Tools = make([]model.ToolDefinition, len(call.Request.Tools))
			for i, d := range call.Request.Tools {
				d.DeferLoading = c.Has(d.Name)
				req.Tools[i] = d
			}
			marked := *call
			marked.Request = &req
			return next(ctx, &marked)
		}
	}
}

// guardReferenced refuses a call to a deferred tool that no search of the
// provider returned in the thread (nor a promotion of this catalogue).
func (c *Catalog) guardReferenced() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			if call != nil && c.IsHidden(call.State, call.Name) && !referenced(call.State, call.Name) {
				return tool.Errorf("Error: Tool '%s' is deferred and has not been loaded. Search for it with the tool search tool first, then retry.", call.Name), nil
			}
			return next(ctx, call, args)
		}
	}
}

// referenced reports whether an assistant message of st lists name among
// the tools its provider's search returned.
func referenced(st *thread.State, name string) bool {
	if st == nil {
		return false
	}
	for i := len(st.Messages) - 1; i >= 0; i-- {
		m := &st.Messages[i]
		if m.Role == model.RoleAssistant && slices.Contains(model.ToolReferences(*m), name) {
			return true
		}
	}
	return false
}

// checkVariant reports an unknown provider search variant.
func checkVariant(v string) error {
	if v != model.ToolSearchRegex && v != model.ToolSearchBM25 {
		return fmt.Errorf("deferred: unknown provider tool search %q", v)
	}
	return nil
}
