package community

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// defaultExaBase is the Exa API.
const defaultExaBase = "https://api.exa.ai"

// Exa defaults, as DeerFlow's exa tools.
const (
	defaultExaHighlightChars = 1000
	exaFetchChars            = 4096
)

// exa searches with Exa's /search API (x-api-key header), asking for
// highlights as each result's content.
type exa struct {
	opts           *ProviderOptions
	client         *http.Client
	searchType     string
	highlightChars int
}

// exaResponse is the shape of Exa's /search and /contents responses.
type exaResponse struct {
	Results []struct {
		Title      string   `json:"title"`
		URL        string   `json:"url"`
		Text       string   `json:"text"`
		Highlights []string `json:"highlights"`
	} `json:"results"`
	Statuses []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Error  *struct {
			Tag string `json:"tag"`
		} `json:"error"`
	} `json:"statuses"`
}

func exaHeader(o *ProviderOptions) (http.Header, error) {
	key := o.apiKey("EXA_API_KEY")
	if key == "" {
		return nil, providerErrorf("EXA_API_KEY is not configured")
	}
	return http.Header{"X-Api-Key": {key}}, nil
}

func (e *exa) search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	h, err := exaHeader(e.opts)
	if err != nil {
		return nil, err
	}
	body := map[string]any{
		"query":      query,
		"type":       cmpOrString(e.searchType, "auto"),
		"numResults": n,
		"contents":   map[string]any{"highlights": map[string]any{"maxCharacters": cmpOrInt(e.highlightChars, defaultExaHighlightChars)}},
	}
	var out exaResponse
	if err := postJSONHeader(ctx, e.client, e.opts.baseURL(defaultExaBase)+"/search", h, body, defaultMaxBytes, &out); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, providerErrorf("Exa %v", err)
	}
	res := make([]SearchResult, 0, len(out.Results))
	for _, r := range out.Results {
		res = append(res, SearchResult{Title: r.Title, URL: r.URL, Content: strings.Join(r.Highlights, "\n")})
	}
	return res, nil
}

// fetchExa reads the page's text through Exa's /contents API, as
// DeerFlow's exa web_fetch does: "# {title}\n\n{text}".
func (f *Fetcher) fetchExa(ctx context.Context, u *url.URL) (string, error) {
	h, err := exaHeader(&f.opts.ProviderOptions)
	if err != nil {
		return "", err
	}
	body := map[string]any{"urls": []string{u.String()}, "text": map[string]any{"maxCharacters": max(f.opts.MaxChars, exaFetchChars)}}
	var out exaResponse
	if err := postJSONHeader(ctx, f.provider, f.opts.baseURL(defaultExaBase)+"/contents", h, body, f.opts.MaxBytes, &out); err != nil {
		return "", fmt.Errorf("Exa %v", err)
	}
	if len(out.Results) == 0 {
		for _, s := range out.Statuses {
			if s.Status == "error" && s.Error != nil && s.Error.Tag != "" {
				return "", fmt.Errorf("Exa could not read %s: %s", u, s.Error.Tag)
			}
		}
		return "", errors.New("No results found")
	}
	r := out.Results[0]
	return Page{Title: cmpOrString(strings.TrimSpace(r.Title), "Untitled"), Markdown: r.Text}.Document(), nil
}
