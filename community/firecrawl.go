package community

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// defaultFirecrawlBase is the Firecrawl API.
const defaultFirecrawlBase = "https://api.firecrawl.dev"

// firecrawl searches and scrapes through Firecrawl's v2 REST API (bearer
// key). fastCRW speaks the same API; newFastCRW configures it.
type firecrawl struct {
	name    string // "Firecrawl" or "fastCRW", in messages
	base    string
	key     string
	keyVar  string // the key's environment variable, in messages
	needKey bool   // a self-hosted fastCRW may need none
	client  *http.Client
}

func newFirecrawl(o *ProviderOptions, c *http.Client) *firecrawl {
	return &firecrawl{name: "Firecrawl", base: o.baseURL(defaultFirecrawlBase), key: o.apiKey("FIRECRAWL_API_KEY"),
		keyVar: "FIRECRAWL_API_KEY", needKey: true, client: c}
}

// firecrawlSearch is the shape of Firecrawl's POST /v2/search response.
type firecrawlSearch struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Data    struct {
		Web []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
		} `json:"web"`
	} `json:"data"`
}

// firecrawlScrape is the shape of Firecrawl's POST /v2/scrape response.
type firecrawlScrape struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Data    struct {
		Markdown string `json:"markdown"`
		Metadata struct {
			Title string `json:"title"`
		} `json:"metadata"`
	} `json:"data"`
}

func (fc *firecrawl) post(ctx context.Context, path string, body, out any, maxBytes int64) error {
	if fc.needKey && fc.key == "" {
		return providerErrorf("%s is not configured", fc.keyVar)
	}
	if err := postJSON(ctx, fc.client, fc.base+path, fc.key, body, maxBytes, out); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return providerErrorf("%s %v", fc.name, err)
	}
	return nil
}

func (fc *firecrawl) search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	var out firecrawlSearch
	if err := fc.post(ctx, "/v2/search", map[string]any{"query": query, "limit": n}, &out, defaultMaxBytes); err != nil {
		return nil, err
	}
	if !out.Success && out.Error != "" {
		return nil, providerErrorf("%s: %s", fc.name, out.Error)
	}
	res := make([]SearchResult, 0, len(out.Data.Web))
	for _, r := range out.Data.Web {
		res = append(res, SearchResult{Title: r.Title, URL: r.URL, Content: r.Description})
	}
	return res, nil
}

// scrape returns the page as "# {title}\n\n{markdown}", as DeerFlow's
// firecrawl and fastcrw web_fetch do.
func (fc *firecrawl) scrape(ctx context.Context, u *url.URL, maxBytes int64) (string, error) {
	var out firecrawlScrape
	body := map[string]any{"url": u.String(), "formats": []string{"markdown"}}
	if err := fc.post(ctx, "/v2/scrape", body, &out, maxBytes); err != nil {
		return "", err
	}
	if !out.Success && out.Error != "" {
		return "", fmt.Errorf("%s: %s", fc.name, out.Error)
	}
	if strings.TrimSpace(out.Data.Markdown) == "" {
		return "", errors.New("No content found")
	}
	title := cmp.Or(strings.TrimSpace(out.Data.Metadata.Title), "Untitled")
	return Page{Title: title, Markdown: out.Data.Markdown}.Document(), nil
}
