package config

import (
	"fmt"
	"net/url"
)

// ToolSearchEmbeddings is tool_search.embeddings: the OpenAI-compatible
// /v1/embeddings endpoint (OpenAI, Ollama, vLLM) whose vectors rank
// deferred tools beside the lexical search. Zero values: off.
type ToolSearchEmbeddings struct {
	// Model names the embeddings model; empty turns hybrid search off.
	Model string `yaml:"model"`
	// BaseURL is the API's base, up to and without /embeddings (default
	// https://api.openai.com/v1).
	BaseURL string `yaml:"base_url"`
	// APIKey is sent as a bearer token when set.
	APIKey string `yaml:"api_key"`
	// QueryTimeoutMS bounds embedding one query, in milliseconds (default
	// 500); past it the search is lexical only.
	QueryTimeoutMS int `yaml:"query_timeout_ms"`
	// BuildTimeoutSeconds bounds embedding a whole catalogue (default
	// 600); until it is embedded, searches are lexical only.
	BuildTimeoutSeconds int `yaml:"build_timeout_seconds"`
	// MinSimilarity is the least cosine similarity between a query and a
	// tool for the tool to be ranked by meaning, from 0 to below 1
	// (default 0: no floor, so a search always fills its results).
	MinSimilarity float64 `yaml:"min_similarity"`
}

// DefaultEmbeddingsBaseURL is OpenAI's API, the default of
// tool_search.embeddings.base_url.
const DefaultEmbeddingsBaseURL = "https://api.openai.com/v1"

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
	p.validateToolSearchEmbeddings(&ts.Embeddings)
	switch ts.ProviderSearch {
	case "", "regex", "bm25":
	default:
		p.invalid("tool_search.provider_search", `must be "regex", "bm25" or empty, not %q`, ts.ProviderSearch)
	}
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

// validateToolSearchEmbeddings fills in the defaults of
// tool_search.embeddings and checks its values when a model is named.
func (p *parser) validateToolSearchEmbeddings(e *ToolSearchEmbeddings) {
	const at = "tool_search.embeddings"
	if e.Model == "" {
		if e.BaseURL != "" || e.APIKey != "" {
			p.invalid(joinKey(at, "model"), "is required when base_url or api_key is set")
		}
		return
	}
	if e.BaseURL == "" {
		e.BaseURL = DefaultEmbeddingsBaseURL
	}
	if u, err := url.Parse(e.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.invalid(joinKey(at, "base_url"), "must be an http or https URL, got %q", e.BaseURL)
	}
	if e.QueryTimeoutMS == 0 {
		e.QueryTimeoutMS = 500
	}
	if e.BuildTimeoutSeconds == 0 {
		e.BuildTimeoutSeconds = 600
	}
	atLeast(p, joinKey(at, "query_timeout_ms"), e.QueryTimeoutMS, 1)
	atLeast(p, joinKey(at, "build_timeout_seconds"), e.BuildTimeoutSeconds, 1)
	if e.MinSimilarity < 0 || e.MinSimilarity >= 1 {
		p.invalid(joinKey(at, "min_similarity"), "must be at least 0 and below 1 (a cosine similarity), got %v", e.MinSimilarity)
	}
}
