package community

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Crawl4AI defaults, as DeerFlow's crawl4ai web_fetch.
const (
	defaultCrawl4AIBase   = "http://localhost:11235"
	defaultCrawl4AIFilter = "fit"
)

// crawl4aiFilters are the markdown filters of Crawl4AI's POST /md.
var crawl4aiFilters = []string{"fit", "raw", "bm25", "llm"}

// fetchCrawl4AI asks a self-hosted Crawl4AI server for the page's
// markdown (POST /md {"url", "f"} with the bearer token), which the
// server has already cleaned; it is returned as it is, as DeerFlow does.
func (f *Fetcher) fetchCrawl4AI(ctx context.Context, u *url.URL) (string, bool, error) {
	payload, _ := json.Marshal(map[string]string{"url": u.String(), "f": cmpOrString(f.opts.Filter, defaultCrawl4AIFilter)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.opts.baseURL(defaultCrawl4AIBase)+"/md", bytes.NewReader(payload))
	if err != nil {
		return "", false, fmt.Errorf("Crawl4AI request failed: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if tok := strings.TrimSpace(cmpOrString(f.opts.BrowserlessOptions.Token, f.opts.APIKey)); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	data, cut, _, err := f.providerBody(req, "Crawl4AI")
	if err != nil {
		return "", false, err
	}
	var out struct {
		Success  bool   `json:"success"`
		Markdown string `json:"markdown"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return "", false, errors.New("Crawl4AI returned a non-JSON response")
	}
	if !out.Success {
		return "", false, fmt.Errorf("Crawl4AI reported failure for %s", u)
	}
	if strings.TrimSpace(out.Markdown) == "" {
		return "", false, errors.New("Crawl4AI returned empty markdown")
	}
	return out.Markdown, cut, nil
}
