package community

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// InfoQuest's endpoints (BytePlus). base_url replaces the endpoint of the
// tool it is set on: the search endpoint for web_search and image_search,
// the reader for web_fetch.
const (
	defaultInfoQuestSearch = "https://search.infoquest.bytepluses.com"
	defaultInfoQuestReader = "https://reader.infoquest.bytepluses.com"
)

// infoquest searches the web and images with InfoQuest (bearer key from
// api_key or INFOQUEST_API_KEY).
type infoquest struct {
	opts   *ProviderOptions
	client *http.Client
	so     *SearchOptions
}

// infoquestResponse is the shape of InfoQuest's search response:
// search_result.results[].content.results holds organic pages, top
// stories and image results.
type infoquestResponse struct {
	SearchResult *struct {
		Results []struct {
			Content struct {
				Results struct {
					Organic []struct {
						Title string `json:"title"`
						Desc  string `json:"desc"`
						URL   string `json:"url"`
					} `json:"organic"`
					TopStories *struct {
						Items []struct {
							Title     string `json:"title"`
							URL       string `json:"url"`
							Source    string `json:"source"`
							TimeFrame string `json:"time_frame"`
						} `json:"items"`
					} `json:"top_stories"`
					Images []struct {
						Original string `json:"original"`
						Title    string `json:"title"`
					} `json:"images_results"`
				} `json:"results"`
			} `json:"content"`
		} `json:"results"`
	} `json:"search_result"`
}

func (q *infoquest) post(ctx context.Context, body map[string]any, what string) (*infoquestResponse, error) {
	body["format"] = "JSON"
	var out infoquestResponse
	if err := postJSON(ctx, q.client, q.opts.baseURL(defaultInfoQuestSearch), q.opts.apiKey("INFOQUEST_API_KEY"), body, defaultMaxBytes, &out); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, providerErrorf("InfoQuest %s %v", what, err)
	}
	if out.SearchResult == nil {
		return nil, providerErrorf("InfoQuest %s API returned the wrong format (no search_result)", what)
	}
	return &out, nil
}

// search returns InfoQuest's organic pages, then its top stories, each
// URL once, as DeerFlow's InfoQuest client cleans them.
func (q *infoquest) search(ctx context.Context, query string, _ int) ([]SearchResult, error) {
	body := map[string]any{"query": query}
	if q.so.SearchTimeRange > 0 {
		body["time_range"] = q.so.SearchTimeRange
	}
	out, err := q.post(ctx, body, "web search")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var res []SearchResult
	add := func(r SearchResult) {
		if r.URL != "" && !seen[r.URL] {
			seen[r.URL] = true
			res = append(res, r)
		}
	}
	for _, c := range out.SearchResult.Results {
		for _, r := range c.Content.Results.Organic {
			add(SearchResult{Title: r.Title, URL: r.URL, Content: r.Desc})
		}
		if ts := c.Content.Results.TopStories; ts != nil {
			for _, r := range ts.Items {
				if r.Title != "" {
					add(SearchResult{Title: r.Title, URL: r.URL, Content: strings.TrimSpace(r.Source + " " + r.TimeFrame)})
				}
			}
		}
	}
	return res, nil
}

func (q *infoquest) images(ctx context.Context, iq ImageQuery) ([]ImageResult, error) {
	body := map[string]any{"query": iq.Query, "search_type": "Images", "image_size": cmpOrString(q.so.ImageSize, "i")}
	if r := q.so.ImageSearchTimeRange; r > 0 {
		body["time_range"] = r
	}
	out, err := q.post(ctx, body, "image search")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var res []ImageResult
	for _, c := range out.SearchResult.Results {
		for _, r := range c.Content.Results.Images {
			if r.Original != "" && !seen[r.Original] {
				seen[r.Original] = true
				res = append(res, ImageResult{Title: r.Title, ImageURL: r.Original, ThumbnailURL: r.Original})
			}
		}
	}
	return res, nil
}

// fetchInfoQuest asks InfoQuest's reader for the page's HTML (its
// reader_result, else content, else the body as it is) and extracts it
// locally, as DeerFlow does.
func (f *Fetcher) fetchInfoQuest(ctx context.Context, u *url.URL) (string, bool, error) {
	body := map[string]any{"url": u.String(), "format": "HTML"}
	if f.opts.FetchTime > 0 {
		body["fetch_time"] = f.opts.FetchTime
	}
	if t := f.opts.Timeout; t > 0 {
		body["timeout"] = t
	}
	if f.opts.NavigationTimeout > 0 {
		body["navi_timeout"] = f.opts.NavigationTimeout
	}
	payload, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.opts.baseURL(defaultInfoQuestReader), bytes.NewReader(payload))
	if err != nil {
		return "", false, fmt.Errorf("InfoQuest fetch API failed: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key := f.opts.apiKey("INFOQUEST_API_KEY"); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	data, cut, _, err := f.providerBody(req, "InfoQuest fetch API")
	if err != nil {
		return "", false, err
	}
	page := string(data)
	var parsed struct {
		ReaderResult *string `json:"reader_result"`
		Content      *string `json:"content"`
	}
	if json.Unmarshal(data, &parsed) == nil {
		switch {
		case parsed.ReaderResult != nil:
			page = *parsed.ReaderResult
		case parsed.Content != nil:
			page = *parsed.Content
		}
	}
	if strings.TrimSpace(page) == "" {
		return "", false, errors.New("InfoQuest returned no result")
	}
	p, err := ExtractHTML(strings.NewReader(page), u)
	if err != nil {
		return "", false, fmt.Errorf("Failed to read %s: %v", u, err)
	}
	return p.Document(), cut, nil
}

// providerBody runs a provider request and returns its body, capped at
// MaxBytes, and its headers: a non-200 status, an empty body or a
// transport failure is an error prefixed with service.
func (f *Fetcher) providerBody(req *http.Request, service string) ([]byte, bool, http.Header, error) {
	resp, err := f.provider.Do(req)
	if err != nil {
		if req.Context().Err() != nil {
			return nil, false, nil, req.Context().Err()
		}
		if errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err) {
			return nil, false, nil, fmt.Errorf("%s request timed out after %s", service, f.opts.timeout(defaultFetchTimeout))
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, false, nil, fmt.Errorf("%s request failed: %v", service, err)
	}
	defer resp.Body.Close()
	data, cut, err := readCapped(resp.Body, f.opts.MaxBytes)
	if err != nil {
		return nil, false, nil, fmt.Errorf("%s request failed: %v", service, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := truncateRunes(string(bytes.ToValidUTF8(data, nil)), 200)
		return nil, false, nil, fmt.Errorf("%s returned HTTP %d: %s", service, resp.StatusCode, msg)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, false, nil, fmt.Errorf("%s returned an empty response", service)
	}
	return data, cut, resp.Header, nil
}
