package community

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// defaultBraveBase is the Brave Search API.
const defaultBraveBase = "https://api.search.brave.com"

// brave searches with the Brave Search API (X-Subscription-Token).
type brave struct {
	opts   *SearchOptions
	client *http.Client
}

// braveWeb is the shape of Brave's /res/v1/web/search response.
type braveWeb struct {
	Web struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
		} `json:"results"`
	} `json:"web"`
}

// braveImages is the shape of Brave's /res/v1/images/search response.
type braveImages struct {
	Results []struct {
		Title     string `json:"title"`
		URL       string `json:"url"`
		Source    string `json:"source"`
		Thumbnail struct {
			Src    string `json:"src"`
			Width  int    `json:"width"`
			Height int    `json:"height"`
		} `json:"thumbnail"`
		Properties struct {
			URL    string `json:"url"`
			Width  int    `json:"width"`
			Height int    `json:"height"`
		} `json:"properties"`
	} `json:"results"`
}

func braveSafe(s string) string {
	switch s {
	case "on", "strict":
		return "strict"
	case "off":
		return "off"
	}
	return "moderate"
}

func (b *brave) get(ctx context.Context, path string, params url.Values, out any, service string) error {
	key := b.opts.apiKey("BRAVE_SEARCH_API_KEY")
	if key == "" {
		return providerErrorf("BRAVE_SEARCH_API_KEY is not configured")
	}
	if b.opts.Country != "" {
		params.Set("country", b.opts.Country)
	}
	if b.opts.SearchLang != "" {
		params.Set("search_lang", b.opts.SearchLang)
	}
	if b.opts.Spellcheck != nil {
		params.Set("spellcheck", strconv.FormatBool(*b.opts.Spellcheck))
	}
	params.Set("safesearch", braveSafe(b.opts.SafeSearch))
	err := getJSON(ctx, b.client, b.opts.baseURL(defaultBraveBase)+path+"?"+params.Encode(),
		http.Header{"X-Subscription-Token": {key}}, out)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return providerErrorf("%s %v", service, err)
	}
	return nil
}

// braveQuery trims the query to the API's 400-character limit.
func braveQuery(q string) string {
	q, _ = truncateRunes(strings.TrimSpace(q), 400)
	return q
}

func (b *brave) search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	var resp braveWeb
	params := url.Values{"q": {braveQuery(query)}, "count": {strconv.Itoa(n)}, "text_decorations": {"false"}}
	if err := b.get(ctx, "/res/v1/web/search", params, &resp, "Brave Search"); err != nil {
		return nil, err
	}
	out := make([]SearchResult, 0, len(resp.Web.Results))
	for _, r := range resp.Web.Results {
		out = append(out, SearchResult{Title: r.Title, URL: r.URL, Content: r.Description})
	}
	return out, nil
}

func (b *brave) images(ctx context.Context, q ImageQuery) ([]ImageResult, error) {
	var resp braveImages
	params := url.Values{"q": {braveQuery(q.Query)}, "count": {strconv.Itoa(q.MaxResults)}}
	if err := b.get(ctx, "/res/v1/images/search", params, &resp, "Brave Image Search"); err != nil {
		return nil, err
	}
	out := make([]ImageResult, 0, len(resp.Results))
	for _, r := range resp.Results {
		img := ImageResult{Title: r.Title, ImageURL: r.Properties.URL, ThumbnailURL: r.Thumbnail.Src,
			SourceURL: r.URL, Width: r.Properties.Width, Height: r.Properties.Height}
		if img.ImageURL == "" {
			img.ImageURL, img.Width, img.Height = r.Thumbnail.Src, r.Thumbnail.Width, r.Thumbnail.Height
		}
		if img.ThumbnailURL == "" {
			img.ThumbnailURL = img.ImageURL
		}
		out = append(out, img)
	}
	return out, nil
}
