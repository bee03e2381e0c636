package agent

import (
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// This file decides which tools of a run are deferred (Antler's "deferral
// when it pays": docs/design.md). DeerFlow defers every MCP tool as soon
// as tool_search is on; Antler does that by default (tool_search.defer:
// always) and can instead defer only when the tools would crowd the
// model's context (auto), per server (extensions file, defer) and per
// tool of any source (tool_search.tools).

// DefaultContextWindow is the context window, in tokens, that auto
// deferral assumes for a model whose config sets no context_window.
const DefaultContextWindow = 128_000

// definitionOverheadTokens approximates what a provider adds around one
// tool definition (its framing keys and punctuation).
const definitionOverheadTokens = 10

// DeferOptions says how [DeferTools] defers the tools of one agent build.
type DeferOptions struct {
	// Catalogs builds each distinct catalogue's index once (nil: built
	// every time).
	Catalogs *deferred.CatalogCache
	// Config is the tool_search section.
	Config config.ToolSearch
	// Servers are the MCP servers of the extensions file: their routing
	// hints and their defer key (nil: no routing, every server follows
	// the section).
	Servers map[string]config.MCPServer
	// ContextWindow is the run model's context window in tokens (0:
	// unknown, taken as DefaultContextWindow).
	ContextWindow int
	// Model is the run's model: with tool_search.provider_search set and
	// a model that searches tools itself (model.ToolSearcher), the
	// provider's search replaces tool_search (nil: tool_search).
	Model model.ChatModel
}

// DeferTools sets up deferred tools over a run's tool list when the
// tool_search section is on: nil when it is off or when no tool is to be
// deferred (then every tool binds with its schema and no tool_search is
// bound). Which tools are deferred: see [DeferredNames].
func DeferTools(entries []toolset.Entry, o DeferOptions) (*deferred.Deferred, error) {
	if !o.Config.Enabled {
		return nil, nil
	}
	names := DeferredNames(entries, o)
	if len(names) == 0 {
		return nil, nil
	}
	tools := make([]*tool.Tool, 0, len(names))
	for _, e := range entries {
		if names[e.Tool.Name] {
			tools = append(tools, e.Tool)
		}
	}
	if v := o.Config.ProviderSearch; v != "" && o.Model != nil && model.SearchesTools(o.Model) {
		return o.Catalogs.SetupProviderSearch(tools, o.Config, v)
	}
	return o.Catalogs.SetupRouted(tools, o.Config, o.Servers)
}

// DeferredNames returns the names of the entries that are deferred. Each
// tool has a mode: tool_search.tools names it, else an MCP tool takes its
// server's defer key, else the section's tool_search.defer; any other
// tool is never deferred unless tool_search.tools says so, and tool_search
// itself never is. "always" tools are deferred; "auto" tools are deferred
// together, only when they are more than tool_search.auto_tool_count
// (when set) or their definitions would take more than
// tool_search.auto_context_percent of the context window.
func DeferredNames(entries []toolset.Entry, o DeferOptions) map[string]bool {
	out := map[string]bool{}
	var auto []*tool.Tool
	for _, e := range entries {
		if e.Tool == nil || e.Tool.Name == "" {
			continue
		}
		switch deferMode(e, o) {
		case config.DeferAlways:
			out[e.Tool.Name] = true
		case config.DeferAuto:
			auto = append(auto, e.Tool)
		}
	}
	if autoPays(auto, o) {
		for _, t := range auto {
			out[t.Name] = true
		}
	}
	return out
}

// deferMode is the deferral mode of one entry.
func deferMode(e toolset.Entry, o DeferOptions) string {
	if e.Tool.Name == deferred.ToolSearchName {
		return config.DeferNever
	}
	if m, ok := o.Config.Tools[e.Tool.Name]; ok {
		return m
	}
	if e.Source != toolset.SourceMCP {
		return config.DeferNever
	}
	if s, ok := o.Servers[e.Group]; ok && s.Defer != "" {
		return s.Defer
	}
	if o.Config.Defer == config.DeferAuto {
		return config.DeferAuto
	}
	return config.DeferAlways
}

// autoPays reports whether the auto tools are worth deferring: more of
// them than the count rule allows, or definitions over the share of the
// context window.
func autoPays(auto []*tool.Tool, o DeferOptions) bool {
	if len(auto) == 0 {
		return false
	}
	if n := o.Config.AutoToolCount; n > 0 && len(auto) > n {
		return true
	}
	window := o.ContextWindow
	if window <= 0 {
		window = DefaultContextWindow
	}
	tokens := 0
	for _, t := range auto {
		tokens += DefinitionTokens(t)
	}
	return float64(tokens) > float64(window)*o.Config.AutoContextPercent/100
}

// DefinitionTokens estimates the tokens a tool's definition takes in a
// request: its name, description and parameter schema at four characters
// a token (LangChain's approximation, as summarisation counts), plus the
// provider's framing.
func DefinitionTokens(t *tool.Tool) int {
	chars := len(t.Name) + len(t.Description) + len(t.InputSchema)
	return int(float64(chars)/charsPerToken) + definitionOverheadTokens
}
