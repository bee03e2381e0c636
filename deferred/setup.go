package deferred

import (
	"errors"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// ErrFailClosed is returned by [Setup] when tool_search is enabled and MCP
// tools exist but none of them could be deferred: binding their full
// schemas instead would silently defeat deferral (DeerFlow's wording).
var ErrFailClosed = errors.New("tool_search enabled and MCP candidates exist, but no deferred set was recovered - refusing to bind MCP schemas (fail-closed).")

// Deferred is the deferred-tool support of one agent build.
type Deferred struct {
	// Catalog holds the deferred tools.
	Catalog *Catalog
	// ToolSearch is the tool_search tool; the factory adds it to the
	// bound tools.
	ToolSearch *tool.Tool
	// FilterModel removes unpromoted schemas from model requests; it goes
	// in the model middleware chain after any middleware that writes
	// promotions (routing).
	FilterModel tool.ModelMiddleware
	// GuardTools refuses calls to unpromoted tools.
	GuardTools tool.Middleware
	// Prompt is the <available-deferred-tools> section for the system
	// prompt.
	Prompt string
}

// Setup builds deferred-tool support for the MCP tools of one agent build
// (after any tool-policy filtering, so the catalogue never lists a tool
// the agent may not use). It returns nil and no error when cfg disables
// tool_search or there are no MCP tools: nothing is deferred and tools
// bind as they are. It returns [ErrFailClosed] when MCP tools exist but
// none is deferrable (a nil tool or one without a name).
//
// Setup writes no state, so building a subagent's tools never resets the
// parent's promotions; pass a Catalog built earlier for the same tool
// list through [SetupCatalog] to skip rebuilding the index.
func Setup(mcp []*tool.Tool, cfg config.ToolSearch) (*Deferred, error) {
	if !cfg.Enabled || len(mcp) == 0 {
		return nil, nil
	}
	return SetupCatalog(NewCatalog(mcp), cfg)
}

// SetupCatalog is Setup over an already-built catalogue.
func SetupCatalog(c *Catalog, cfg config.ToolSearch) (*Deferred, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	if c == nil || c.Len() == 0 {
		return nil, ErrFailClosed
	}
	return &Deferred{
		Catalog:     c,
		ToolSearch:  NewToolSearch(c, cfg.MaxResults),
		FilterModel: c.FilterModel(),
		GuardTools:  c.GuardTools(),
		Prompt:      c.PromptSection(),
	}, nil
}
