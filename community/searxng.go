package community

import (
	"context"
	"net/http"
	"net/url"
)

// defaultSearXNGBase is DeerFlow's default SearXNG instance.
const defaultSearXNGBase = "http://localhost:8088"

// searxng searches a SearXNG instance's JSON API (format=json must be
// enabled in the instance's settings).
type searxng struct {
	opts   *SearchOptions
	client *http.Client
}

// searxngResponse is the shape of SearXNG's /search?format=json response.
type searxngResponse struct {
	Results []struct {
		Title        string `json:"title"`
		URL          string `json:"url"`
		Content      string `json:"content"`
		ImgSrc       string `json:"img_src"`
		ThumbnailSrc string `json:"thumbnail_src"`
		Resolution   string `json:"resolution"`
	} `json:"results"`
}

func searxngSafe(s string) string {
	switch s {
	case "on", "strict":
		return "2"
	case "off":
		return "0"
	}
	return "1"
}

func (s *searxng) query(ctx context.Context, query, category string) (*searxngResponse, error) {
	params := url.Values{"q": {query}, "format": {"json"}, "safesearch": {searxngSafe(s.opts.SafeSearch)}}
	if category != "" {
		params.Set("categories", category)
	}
	if s.opts.Language != "" {
		params.Set("language", s.opts.Language)
	}
	var out searxngResponse
	if err := getJSON(ctx, s.client, s.opts.baseURL(defaultSearXNGBase)+"/search?"+params.Encode(), nil, &out); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, providerErrorf("SearXNG %v", err)
	}
	return &out, nil
}

func (s *searxng) search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	resp, err := s.query(ctx, query, "")
	if err != nil {
		return nil, err
	}
	var out []SearchResult
	for _, r := range resp.Results {
		if r.URL == "" {
			continue
		}
		out = append(out, SearchResult{Title: r.Title, URL: r.URL, Content: r.Content})
	}
	return out, nil
}

func (s *searxng) images(ctx context.Context, q ImageQuery) ([]ImageResult, error) {
	resp, err := s.query(ctx, q.Query, "images")
	if err != nil {
		return nil, err
	}
	var out []ImageResult
	for _, r := range resp.Results {
		img := cmpOrString(r.ImgSrc, r.ThumbnailSrc)
		if img == "" {
			continue
		}
		out = append(out, ImageResult{Title: r.Title, ImageURL: img, ThumbnailURL: cmpOrString(r.ThumbnailSrc, img), SourceURL: r.URL})
	}
	return out, nil
}
