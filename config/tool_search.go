package config

import "fmt"

// The values of tool_search.defer, of a tool_search.tools entry and of an
// MCP server's defer key (Antler's own keys: docs/differences.md,
// "Deferral when it pays").
const (
	// DeferAlways defers a tool whatever the size of the tool list.
	DeferAlways = "always"
	// DeferNever binds a tool's whole schema from the first request.
	DeferNever = "never"
	// DeferAuto defers a tool only when the tools in question would take
	// more than tool_search.auto_context_percent of the run model's
	// context window, or number more than tool_search.auto_tool_count.
	DeferAuto = "auto"
)

// toolSearchName is the name of the tool that cannot be deferred: it is
// the way to every deferred tool.
const toolSearchName = "tool_search"

// validateToolSearch applies DeerFlow's clamp of auto_promote_top_k and
// checks Antler's deferral keys.
func (p *parser) validateToolSearch() {
	ts := &p.cfg.ToolSearch
	ts.AutoPromoteTopK = min(max(ts.AutoPromoteTopK, 1), 5)
	atLeast(p, "tool_search.max_results", ts.MaxResults, 1)
	if ts.Defer != DeferAlways && ts.Defer != DeferAuto {
		p.invalid("tool_search.defer", "must be %q or %q, not %q", DeferAlways, DeferAuto, ts.Defer)
	}
	if ts.AutoContextPercent <= 0 || ts.AutoContextPercent > 100 {
		p.invalid("tool_search.auto_context_percent", "must be more than 0 and at most 100, got %v", ts.AutoContextPercent)
	}
	atLeast(p, "tool_search.auto_tool_count", ts.AutoToolCount, 0)
	for _, name := range sortedKeys(ts.Tools) {
		key := joinKey("tool_search.tools", name)
		if name == toolSearchName {
			p.invalid(key, "tool_search cannot be deferred: it is how the model reaches deferred tools")
			continue
		}
		if err := checkDeferMode(ts.Tools[name]); err != nil {
			p.invalid(key, "%v", err)
		}
	}
}

// checkDeferMode checks one per-tool or per-server defer value.
func checkDeferMode(v string) error {
	switch v {
	case DeferAlways, DeferNever, DeferAuto:
		return nil
	}
	return fmt.Errorf("must be %q, %q or %q, not %q", DeferAlways, DeferNever, DeferAuto, v)
}
