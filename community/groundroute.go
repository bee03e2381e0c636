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

// defaultGroundRouteBase is the GroundRoute API.
const defaultGroundRouteBase = "https://api.groundroute.ai"

// groundrouteMaxResults is GroundRoute's own clamp of max_results.
const groundrouteMaxResults = 50

// groundroute searches through GroundRoute's POST /v1/search (bearer
// key), a meta search layer that picks one of several engines per query.
type groundroute struct {
	opts   *ProviderOptions
	client *http.Client
}

// groundrouteResponse is the shape of GroundRoute's /v1/search response.
type groundrouteResponse struct {
	Results []struct {
		Title        string `json:"title"`
		URL          string `json:"url"`
		Snippet      string `json:"snippet"`
		Content      string `json:"content"`
		SourceEngine string `json:"source_engine"`
	} `json:"results"`
}

func groundroutePost(ctx context.Context, o *ProviderOptions, c *http.Client, body any, maxBytes int64, out *groundrouteResponse) error {
	key := o.apiKey("GROUNDROUTE_API_KEY")
	if key == "" {
		return providerErrorf("GROUNDROUTE_API_KEY is not configured")
	}
	if err := postJSON(ctx, c, o.baseURL(defaultGroundRouteBase)+"/v1/search", key, body, maxBytes, out); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return providerErrorf("GroundRoute %v", err)
	}
	return nil
}

// search returns GroundRoute's results. The engine GroundRoute chose is
// not in Antler's common result shape; it is logged at debug level.
func (g *groundroute) search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	var out groundrouteResponse
	if err := groundroutePost(ctx, g.opts, g.client, map[string]any{"query": query, "max_results": n}, defaultMaxBytes, &out); err != nil {
		return nil, err
	}
	res := make([]SearchResult, 0, len(out.Results))
	for i, r := range out.Results {
		if i == 0 && r.SourceEngine != "" {
			g.opts.logger().Debug("groundroute search", "source_engine", r.SourceEngine)
		}
		res = append(res, SearchResult{Title: r.Title, URL: r.URL, Content: cmp.Or(r.Snippet, r.Content)})
	}
	return res, nil
}

// fetchGroundRoute reads one page through GroundRoute's mode=page, as
// DeerFlow's groundroute web_fetch does: "# {title}\n\n{content}".
func (f *Fetcher) fetchGroundRoute(ctx context.Context, u *url.URL) (string, error) {
	var out groundrouteResponse
	body := map[string]any{"query": u.String(), "mode": "page", "max_results": 1}
	if err := groundroutePost(ctx, &f.opts.ProviderOptions, f.provider, body, f.opts.MaxBytes, &out); err != nil {
		return "", err
	}
	if len(out.Results) == 0 {
		return "", errors.New("No results found")
	}
	r := out.Results[0]
	content := cmp.Or(r.Content, r.Snippet)
	if strings.TrimSpace(content) == "" {
		return "", fmt.Errorf("GroundRoute returned no content for %s", u)
	}
	return Page{Title: r.Title, Markdown: content}.Document(), nil
}
