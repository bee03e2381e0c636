package community

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/antlerhq/antler/community/netguard"
	"github.com/antlerhq/antler/tool"
)

//go:embed image_search.md
var imageSearchDescription string

// imageUsageHint is added to every image_search result.
const imageUsageHint = "Use the image_url values as reference images for image generation. Download them first if needed."

// ImageQuery is one image search. The filters are DuckDuckGo's; other
// providers ignore them.
type ImageQuery struct {
	Query      string
	MaxResults int
	Size       string // Small, Medium, Large, Wallpaper
	Color      string // color, Monochrome, Red, ...
	Type       string // photo, clipart, gif, transparent, line
	Layout     string // Square, Tall, Wide
	License    string // any, Public, Share, ShareCommercially, Modify, ModifyCommercially

	// accept screens (and may edit) a provider's result; nil keeps all.
	accept func(*ImageResult) bool
}

// keep applies the query's screen to r.
func (q *ImageQuery) keep(r *ImageResult) bool {
	return q.accept == nil || q.accept(r)
}

// ImageResult is one image_search result.
type ImageResult struct {
	Title        string `json:"title"`
	ImageURL     string `json:"image_url"`
	ThumbnailURL string `json:"thumbnail_url"`
	// SourceURL is the page the image is on, when the provider says.
	SourceURL string `json:"source_url,omitempty"`
	Width     int    `json:"width,omitempty"`
	Height    int    `json:"height,omitempty"`
}

// ImageSearchOutput is image_search's JSON result, the same for every
// provider.
type ImageSearchOutput struct {
	Query        string        `json:"query"`
	TotalResults int           `json:"total_results"`
	Results      []ImageResult `json:"results"`
	UsageHint    string        `json:"usage_hint"`
}

type imageProvider interface {
	images(ctx context.Context, q ImageQuery) ([]ImageResult, error)
}

// ImageSearcher runs image searches. It is safe for concurrent use.
type ImageSearcher struct {
	opts     SearchOptions
	provider imageProvider
	maxCap   int
	guard    netguard.Guard
}

// NewImageSearcher validates opts (the zero value means defaults) and returns an
// ImageSearcher. Providers: ddg (default), brave, searxng, serper,
// infoquest.
func NewImageSearcher(opts SearchOptions) (*ImageSearcher, error) {
	o, err := normalizeSearchOptions(opts)
	if err != nil {
		return nil, err
	}
	s := &ImageSearcher{opts: o}
	c := o.client(defaultSearchTimeout)
	switch o.Provider {
	case ProviderDDG:
		s.provider, s.maxCap = newDDG(&s.opts, c), 100
	case ProviderBrave:
		s.provider, s.maxCap = &brave{opts: &s.opts, client: c}, 200
	case ProviderSearXNG:
		s.provider, s.maxCap = &searxng{opts: &s.opts, client: c}, 100
	case ProviderSerper:
		s.provider, s.maxCap = &serper{opts: &s.opts, client: c}, serperMaxResults
	case ProviderInfoQuest:
		s.provider, s.maxCap = &infoquest{opts: &s.opts.ProviderOptions, client: c, so: &s.opts}, 100
	default:
		return nil, fmt.Errorf("unknown image_search provider %q (want ddg, brave, searxng, serper or infoquest)", o.Provider)
	}
	return s, nil
}

// Search runs q. Results whose image URL is not a public http(s) URL are
// dropped (a consumer may download them); a thumbnail URL that is not is
// blanked.
func (s *ImageSearcher) Search(ctx context.Context, q ImageQuery) (*ImageSearchOutput, error) {
	q.MaxResults = clampResults(s.opts.MaxResults, q.MaxResults, s.maxCap)
	q.Query = strings.TrimSpace(q.Query)
	if q.Query == "" {
		return nil, providerErrorf("query must not be empty")
	}
	q.accept = s.screen
	results, err := s.provider.images(ctx, q)
	if err != nil {
		return nil, err
	}
	kept := make([]ImageResult, 0, min(len(results), q.MaxResults))
	for _, r := range results {
		if len(kept) < q.MaxResults && s.screen(&r) {
			kept = append(kept, r)
		}
	}
	return &ImageSearchOutput{Query: q.Query, TotalResults: len(kept), Results: kept, UsageHint: imageUsageHint}, nil
}

// screen drops a result whose image URL is not a public http(s) URL and
// blanks such thumbnail and source URLs.
func (s *ImageSearcher) screen(r *ImageResult) bool {
	if _, err := s.guard.CheckURLString(r.ImageURL); err != nil {
		return false
	}
	if _, err := s.guard.CheckURLString(r.ThumbnailURL); err != nil {
		r.ThumbnailURL = ""
	}
	if r.SourceURL != "" {
		if _, err := s.guard.CheckURLString(r.SourceURL); err != nil {
			r.SourceURL = ""
		}
	}
	return true
}

// Tool returns the image_search tool backed by s.
func (s *ImageSearcher) Tool() *tool.Tool {
	type input struct {
		Query        string `json:"query" jsonschema:"Search keywords describing the images you want. Be specific (for example 'Japanese woman street photography 1990s' rather than 'woman')."`
		MaxResults   int    `json:"max_results,omitempty" jsonschema:"Maximum number of images to return. Default is 5."`
		Size         string `json:"size,omitempty" jsonschema:"Image size filter: Small, Medium, Large or Wallpaper. Use Large for reference images."`
		Color        string `json:"color,omitempty" jsonschema:"Color filter: color, Monochrome, Red, Orange, Yellow, Green, Blue, Purple, Pink, Brown, Black, Gray, Teal or White."`
		TypeImage    string `json:"type_image,omitempty" jsonschema:"Image type filter: photo, clipart, gif, transparent or line. Use photo for realistic references."`
		Layout       string `json:"layout,omitempty" jsonschema:"Layout filter: Square, Tall or Wide."`
		LicenseImage string `json:"license_image,omitempty" jsonschema:"License filter: any, Public, Share, ShareCommercially, Modify or ModifyCommercially."`
	}
	return tool.New("image_search", strings.TrimSpace(imageSearchDescription),
		func(ctx context.Context, call *tool.Call, in input) (string, error) {
			out, err := s.Search(ctx, ImageQuery{Query: in.Query, MaxResults: in.MaxResults, Size: in.Size,
				Color: in.Color, Type: in.TypeImage, Layout: in.Layout, License: in.LicenseImage})
			return searchText(ctx, in.Query, out, err, "No images found")
		})
}

// NewImageSearch returns the image_search tool configured by opts.
func NewImageSearch(opts SearchOptions) (*tool.Tool, error) {
	s, err := NewImageSearcher(opts)
	if err != nil {
		return nil, err
	}
	return s.Tool(), nil
}
