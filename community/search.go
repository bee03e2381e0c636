package community

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/antlerhq/antler/tool"
)

//go:embed web_search.md
var webSearchDescription string

// The search providers.
const (
	ProviderDDG     = "ddg" // DuckDuckGo, keyless (alias "duckduckgo")
	ProviderTavily  = "tavily"
	ProviderSearXNG = "searxng"
	ProviderBrave   = "brave"

	ProviderExa         = "exa"
	ProviderSerper      = "serper"
	ProviderFirecrawl   = "firecrawl"
	ProviderFastCRW     = "fastcrw" // Firecrawl-compatible
	ProviderGroundRoute = "groundroute"
	ProviderInfoQuest   = "infoquest"
)

// Defaults of SearchOptions.
const (
	defaultSearchTimeout = 30 * time.Second // DeerFlow's DDGS(timeout=30)
	defaultMaxResults    = 5
)

// searchUserAgent is sent to DuckDuckGo, which serves its HTML endpoint
// to browsers.
const searchUserAgent = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

// SearchOptions configure web_search and image_search. The zero value
// searches DuckDuckGo with DeerFlow's defaults.
type SearchOptions struct {
	// Provider is "ddg" (or "", "duckduckgo"), "tavily", "searxng" or
	// "brave" (image_search: "ddg", "searxng" or "brave"). BaseURL
	// replaces the provider's public endpoint (tests, self-hosted
	// SearXNG; default http://localhost:8088 as in DeerFlow). Timeout
	// defaults to 30 s.
	ProviderOptions `yaml:",inline"`
	// MaxResults overrides the model's max_results argument, as in
	// DeerFlow; 0 keeps the argument (default 5).
	MaxResults int `yaml:"max_results"`
	// Region is DuckDuckGo's kl region (default "wt-wt", worldwide).
	Region string `yaml:"region"`
	// SafeSearch is "on"/"strict", "moderate" (default) or "off", for
	// DuckDuckGo, Brave and SearXNG.
	SafeSearch string `yaml:"safesearch"`
	// Backend is DeerFlow's ddgs backend list. Antler always queries
	// DuckDuckGo's own endpoint; other backends are ignored with a
	// warning.
	Backend any `yaml:"backend"`
	// IncludeDomains and ExcludeDomains filter Tavily results.
	IncludeDomains []string `yaml:"include_domains"`
	ExcludeDomains []string `yaml:"exclude_domains"`
	// SearchDepth is Tavily's "basic" (default) or "advanced".
	SearchDepth string `yaml:"search_depth"`
	// Country, SearchLang and Spellcheck are passed to Brave.
	Country    string `yaml:"country"`
	SearchLang string `yaml:"search_lang"`
	Spellcheck *bool  `yaml:"spellcheck"`
	// Language is passed to SearXNG.
	Language string `yaml:"language"`
	// SearchType is Exa's search type: "auto" (default), "neural",
	// "keyword" or "fast".
	SearchType string `yaml:"search_type"`
	// ContentsMaxCharacters caps the highlight text of each Exa result
	// (default 1000, as DeerFlow).
	ContentsMaxCharacters int `yaml:"contents_max_characters"`
	// SearchTimeRange limits InfoQuest web results to the last n days; 0
	// or -1 (DeerFlow's "disabled") sends no limit.
	SearchTimeRange int `yaml:"search_time_range"`
	// ImageSearchTimeRange limits InfoQuest image results to the last n
	// days (1..365); 0 or -1 sends no limit.
	ImageSearchTimeRange int `yaml:"image_search_time_range"`
	// ImageSize is InfoQuest's image size filter: "l", "m" or "i"
	// (default "i", as DeerFlow).
	ImageSize string `yaml:"image_size"`
}

// SearchResult is one web_search result.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Content string `json:"content"`
}

// SearchOutput is web_search's JSON result, the same for every provider
// (DeerFlow's DuckDuckGo shape).
type SearchOutput struct {
	Query        string         `json:"query"`
	TotalResults int            `json:"total_results"`
	Results      []SearchResult `json:"results"`
}

// webProvider runs a web search for at most n results.
type webProvider interface {
	search(ctx context.Context, query string, n int) ([]SearchResult, error)
}

// providerError is a provider failure the model sees in the "error" key.
type providerError struct{ msg string }

func (e *providerError) Error() string { return e.msg }

func providerErrorf(format string, args ...any) error {
	return &providerError{fmt.Sprintf(format, args...)}
}

// Searcher runs web searches. It is safe for concurrent use.
type Searcher struct {
	opts     SearchOptions
	provider webProvider
	maxCap   int // the provider's largest result count
}

// NewSearcher validates opts (the zero value means defaults) and returns a Searcher.
func NewSearcher(opts SearchOptions) (*Searcher, error) {
	o, err := normalizeSearchOptions(opts)
	if err != nil {
		return nil, err
	}
	s := &Searcher{opts: o}
	c := o.client(defaultSearchTimeout)
	switch o.Provider {
	case ProviderDDG:
		s.provider, s.maxCap = newDDG(&s.opts, c), 50
	case ProviderTavily:
		s.provider, s.maxCap = &tavily{opts: &s.opts, client: c}, 20
	case ProviderSearXNG:
		s.provider, s.maxCap = &searxng{opts: &s.opts, client: c}, 50
	case ProviderBrave:
		s.provider, s.maxCap = &brave{opts: &s.opts, client: c}, 20
	case ProviderExa:
		s.provider, s.maxCap = &exa{opts: &s.opts.ProviderOptions, client: c, searchType: o.SearchType, highlightChars: o.ContentsMaxCharacters}, 100
	case ProviderSerper:
		s.provider, s.maxCap = &serper{opts: &s.opts, client: c}, serperMaxResults
	case ProviderFirecrawl:
		s.provider, s.maxCap = newFirecrawl(&s.opts.ProviderOptions, c), 100
	case ProviderFastCRW:
		s.provider, s.maxCap = newFastCRW(&s.opts.ProviderOptions, c), 100
	case ProviderGroundRoute:
		s.provider, s.maxCap = &groundroute{opts: &s.opts.ProviderOptions, client: c}, groundrouteMaxResults
	case ProviderInfoQuest:
		s.provider, s.maxCap = &infoquest{opts: &s.opts.ProviderOptions, client: c, so: &s.opts}, 50
	default:
		return nil, fmt.Errorf("unknown web_search provider %q (want ddg, tavily, searxng, brave, exa, serper, firecrawl, fastcrw, groundroute or infoquest)", o.Provider)
	}
	return s, nil
}

func normalizeSearchOptions(o SearchOptions) (SearchOptions, error) {
	if err := o.validate(); err != nil {
		return o, err
	}
	switch o.Provider {
	case "", "duckduckgo":
		o.Provider = ProviderDDG
	}
	if o.MaxResults < 0 {
		return o, errors.New("max_results must not be negative")
	}
	switch o.SafeSearch {
	case "", "moderate", "on", "strict", "off":
	default:
		return o, fmt.Errorf("safesearch %q: want on, moderate or off", o.SafeSearch)
	}
	switch o.SearchType {
	case "", "auto", "neural", "keyword", "fast":
	default:
		return o, fmt.Errorf("search_type %q: want auto, neural, keyword or fast", o.SearchType)
	}
	switch o.ImageSize {
	case "", "l", "m", "i":
	default:
		return o, fmt.Errorf("image_size %q: want l, m or i", o.ImageSize)
	}
	if o.ContentsMaxCharacters < 0 {
		return o, errors.New("contents_max_characters must not be negative")
	}
	if o.ImageSearchTimeRange > 365 {
		return o, fmt.Errorf("image_search_time_range %d: want 1..365 days, or -1 for no limit", o.ImageSearchTimeRange)
	}
	if o.Backend != nil && !ddgBackendOK(o.Backend) {
		o.logger().Warn("web_search: backend is ignored; Antler queries DuckDuckGo's HTML endpoint", "backend", o.Backend)
	}
	return o, nil
}

func ddgBackendOK(b any) bool {
	var names []string
	switch v := b.(type) {
	case string:
		names = strings.Split(v, ",")
	case []any:
		for _, x := range v {
			names = append(names, fmt.Sprint(x))
		}
	}
	for _, n := range names {
		switch strings.TrimSpace(strings.ToLower(n)) {
		case "auto", "duckduckgo", "html", "":
		default:
			return false
		}
	}
	return true
}

// Search runs query for up to maxResults results (0 means the default of
// 5; a configured max_results wins, as in DeerFlow). A provider failure is
// returned as an error whose text is model-facing.
func (s *Searcher) Search(ctx context.Context, query string, maxResults int) (*SearchOutput, error) {
	if strings.TrimSpace(query) == "" {
		return nil, providerErrorf("query must not be empty")
	}
	n := clampResults(s.opts.MaxResults, maxResults, s.maxCap)
	results, err := s.provider.search(ctx, strings.TrimSpace(query), n)
	if err != nil {
		return nil, err
	}
	if len(results) > n {
		results = results[:n]
	}
	return &SearchOutput{Query: query, TotalResults: len(results), Results: results}, nil
}

// clampResults picks the configured count, else the argument, else the
// default, and keeps it within 1..cap.
func clampResults(configured, arg, cap int) int {
	n := configured
	if n <= 0 {
		n = arg
	}
	if n <= 0 {
		n = defaultMaxResults
	}
	return min(n, cap)
}

// Tool returns the web_search tool backed by s.
func (s *Searcher) Tool() *tool.Tool {
	type input struct {
		Query      string `json:"query" jsonschema:"Search keywords describing what you want to find. Be specific for better results."`
		MaxResults int    `json:"max_results,omitempty" jsonschema:"Maximum number of results to return. Default is 5."`
	}
	return tool.New("web_search", strings.TrimSpace(webSearchDescription),
		func(ctx context.Context, call *tool.Call, in input) (string, error) {
			out, err := s.Search(ctx, in.Query, in.MaxResults)
			return searchText(ctx, in.Query, out, err, "No results found")
		})
}

// NewWebSearch returns the web_search tool configured by opts.
func NewWebSearch(opts SearchOptions) (*tool.Tool, error) {
	s, err := NewSearcher(opts)
	if err != nil {
		return nil, err
	}
	return s.Tool(), nil
}

// searchText renders a search outcome as DeerFlow does: the output as
// JSON indented by two spaces, or {"error": ..., "query": ...} when there
// is no result or the provider failed. Only cancellation is a Go error.
func searchText(ctx context.Context, query string, out any, err error, none string) (string, error) {
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		var pe *providerError
		if !errors.As(err, &pe) {
			err = &providerError{err.Error()}
		}
		return errorJSON(err.Error(), query), nil
	}
	empty := false
	switch v := out.(type) {
	case *SearchOutput:
		empty = v == nil || len(v.Results) == 0
	case *ImageSearchOutput:
		empty = v == nil || len(v.Results) == 0
	}
	if empty {
		return errorJSON(none, query), nil
	}
	return indentJSON(out)
}

// errorJSON is Python's json.dumps({"error": msg, "query": q}).
func errorJSON(msg, query string) string {
	return `{"error": ` + jsonString(msg) + `, "query": ` + jsonString(query) + `}`
}

func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func indentJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// getJSON runs a GET with headers and decodes the JSON response.
func getJSON(ctx context.Context, c *http.Client, endpoint string, header http.Header, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return fmt.Errorf("request failed: %v", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	return doJSON(c, req, defaultMaxBytes, out)
}
