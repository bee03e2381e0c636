package community

import (
	"context"
	"net/http"
)

// tavily searches with Tavily's /search API (bearer key).
type tavily struct {
	opts   *SearchOptions
	client *http.Client
}

// tavilySearch is the shape of Tavily's /search response.
type tavilySearch struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

func (t *tavily) search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	key := t.opts.apiKey("TAVILY_API_KEY")
	if key == "" {
		return nil, providerErrorf("TAVILY_API_KEY is not configured")
	}
	body := map[string]any{"query": query, "max_results": n}
	if len(t.opts.IncludeDomains) > 0 {
		body["include_domains"] = t.opts.IncludeDomains
	}
	if len(t.opts.ExcludeDomains) > 0 {
		body["exclude_domains"] = t.opts.ExcludeDomains
	}
	if t.opts.SearchDepth != "" {
		body["search_depth"] = t.opts.SearchDepth
	}
	var out tavilySearch
	if err := postJSON(ctx, t.client, t.opts.baseURL(defaultTavilyBase)+"/search", key, body, defaultMaxBytes, &out); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, providerErrorf("Tavily %v", err)
	}
	res := make([]SearchResult, 0, len(out.Results))
	for _, r := range out.Results {
		res = append(res, SearchResult{Title: r.Title, URL: r.URL, Content: r.Content})
	}
	return res, nil
}
