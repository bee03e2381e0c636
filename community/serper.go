package community

import (
	"context"
	"encoding/json"
	"net/http"
)

// defaultSerperBase is Serper's Google Search API.
const defaultSerperBase = "https://google.serper.dev"

// serperMaxResults is Serper's largest page, as DeerFlow caps it.
const serperMaxResults = 10

// serper searches Google through Serper (X-API-KEY header): /search for
// web results, /images for images.
type serper struct {
	opts   *SearchOptions
	client *http.Client
}

// serperResponse is the shape of Serper's /search and /images responses.
// A missing or null list means no results; a list of another type is an
// unexpected format.
type serperResponse struct {
	Organic json.RawMessage `json:"organic"`
	Images  json.RawMessage `json:"images"`
}

type serperOrganic struct {
	Title   string `json:"title"`
	Link    string `json:"link"`
	Snippet string `json:"snippet"`
}

type serperImage struct {
	Title        string `json:"title"`
	ImageURL     string `json:"imageUrl"`
	ThumbnailURL string `json:"thumbnailUrl"`
	Link         string `json:"link"`
	ImageWidth   int    `json:"imageWidth"`
	ImageHeight  int    `json:"imageHeight"`
}

// serperQuery trims the query to the 500 characters DeerFlow sends.
func serperQuery(q string) string {
	q, _ = truncateRunes(q, 500)
	return q
}

func (s *serper) post(ctx context.Context, path, query string, n int, field string, items any) error {
	key := s.opts.apiKey("SERPER_API_KEY")
	if key == "" {
		return providerErrorf("SERPER_API_KEY is not configured")
	}
	var out serperResponse
	err := postJSONHeader(ctx, s.client, s.opts.baseURL(defaultSerperBase)+path,
		http.Header{"X-Api-Key": {key}}, map[string]any{"q": serperQuery(query), "num": n}, defaultMaxBytes, &out)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return providerErrorf("Serper %v", err)
	}
	raw := out.Organic
	if field == "images" {
		raw = out.Images
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, items); err != nil {
		return providerErrorf("Serper returned an unexpected response format")
	}
	return nil
}

func (s *serper) search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	var items []serperOrganic
	if err := s.post(ctx, "/search", query, n, "organic", &items); err != nil {
		return nil, err
	}
	out := make([]SearchResult, 0, len(items))
	for _, r := range items {
		out = append(out, SearchResult{Title: r.Title, URL: r.Link, Content: r.Snippet})
	}
	return out, nil
}

// images returns Serper's Google Images results. As in DeerFlow, a
// missing image URL falls back to the thumbnail (and the other way
// round), but a URL that is present and refused by the screen is not
// replaced by its counterpart.
func (s *serper) images(ctx context.Context, q ImageQuery) ([]ImageResult, error) {
	var items []serperImage
	if err := s.post(ctx, "/images", q.Query, q.MaxResults, "images", &items); err != nil {
		return nil, err
	}
	out := make([]ImageResult, 0, len(items))
	for _, r := range items {
		img := ImageResult{Title: r.Title, ImageURL: r.ImageURL, ThumbnailURL: r.ThumbnailURL,
			SourceURL: r.Link, Width: r.ImageWidth, Height: r.ImageHeight}
		if img.ImageURL == "" {
			img.ImageURL = img.ThumbnailURL
		}
		if img.ThumbnailURL == "" {
			img.ThumbnailURL = img.ImageURL
		}
		out = append(out, img)
	}
	return out, nil
}
