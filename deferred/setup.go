package deferred

import (
	"errors"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// ErrFailClosed is returned by [Setup] when tool_search is enabled and MCP
// tools exist but none of them could be deferred: binding their full
// schemas instead would silently defeat deferral (DeerFlow's wording).
var ErrFailClosed = errors.New( //lint:ignore ST1005 DeerFlow's wording
	"tool_search enabled and MCP candidates exist, but no deferred set was recovered - refusing to bind MCP schemas (fail-closed).")

// Deferred is the deferred-tool support of one agent build.
type Deferred struct {
	// Catalog holds the deferred tools.
	Catalog *Catalog
	// ToolSearch is the tool_search tool; the factory adds it to the
	// bound tools. nil when the provider searches (ProviderSearch).
	ToolSearch *tool.Tool
	// ProviderSearch is the provider's own search variant the requests
	// ask for (model.ToolSearchRegex or model.ToolSearchBM25; see
	// CatalogCache.SetupProviderSearch); "" when tool_search searches.
	ProviderSearch string
	// FilterModel removes unpromoted schemas from model requests; it goes
	// in the model middleware chain after any middleware that writes
	// promotions (routing).
	FilterModel tool.ModelMiddleware
	// GuardTools refuses calls to unpromoted tools.
	GuardTools tool.Middleware
	// Prompt is the <available-deferred-tools> section for the system
	// prompt.
	Prompt string
	// Router is the keyword routing (nil when no tool is routed);
	// Routing is its model middleware, which must run before FilterModel
	// (FilterModel fails with [ErrRoutingOrder] otherwise), and
	// RoutingPrompt its <mcp_routing_hints> section ("" without routing).
	Router        *Router
	Routing       tool.ModelMiddleware
	RoutingPrompt string
}

// ModelMiddlewares returns the model middlewares in the order they must
// be chained: routing (when configured), then the filter.
func (d *Deferred) ModelMiddlewares() []tool.ModelMiddleware {
	if d.Routing == nil {
		return []tool.ModelMiddleware{d.FilterModel}
	}
	return []tool.ModelMiddleware{d.Routing, d.FilterModel}
}

// Setup builds deferred-tool support for the MCP tools of one agent build
// (after any tool-policy filtering, so the catalogue never lists a tool
// the agent may not use). It returns nil and no error when cfg disables
// tool_search or there are no MCP tools: nothing is deferred and tools
// bind as they are. It returns [ErrFailClosed] when MCP tools exist but
// none is deferrable (a nil tool or one without a name).
//
// Setup writes no state, so building a subagent's tools never resets the
// parent's promotions. It builds the catalogue's index every time:
// [CatalogCache.SetupRouted] builds it once per distinct tool list, and
// [SetupCatalog] takes a catalogue built earlier.
func Setup(mcp []*tool.Tool, cfg config.ToolSearch) (*Deferred, error) {
	if !cfg.Enabled || len(mcp) == 0 {
		return nil, nil
	}
	return SetupCatalog(NewCatalog(mcp), cfg)
}

// SetupRouted is Setup plus keyword routing from the extensions file's
// MCP servers (DeerFlow's tool_search.py and mcp_routing_middleware.py): see [Router].
func SetupRouted(mcp []*tool.Tool, cfg config.ToolSearch, servers map[string]config.MCPServer) (*Deferred, error) {
	if !cfg.Enabled || len(mcp) == 0 {
		return nil, nil
	}
	return (*CatalogCache)(nil).SetupRouted(mcp, cfg, servers)
}

// SetupCatalog is Setup over an already-built catalogue.
func SetupCatalog(c *Catalog, cfg config.ToolSearch) (*Deferred, error) {
	return setup(c, cfg, nil)
}

func setup(c *Catalog, cfg config.ToolSearch, r *Router) (*Deferred, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	if c == nil || c.Len() == 0 {
		return nil, ErrFailClosed
	}
	d := &Deferred{
		Catalog:     c,
		ToolSearch:  NewToolSearch(c, cfg.MaxResults),
		FilterModel: c.filterModel(r),
		GuardTools:  c.guardTools(r),
		Prompt:      c.PromptSection(),
	}
	if r != nil {
		d.Router, d.Routing, d.RoutingPrompt = r, r.Middleware(), r.PromptSection()
	}
	return d, nil
}
