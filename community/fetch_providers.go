package community

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Provider endpoints used when the options name none.
const (
	defaultJinaEndpoint = "https://r.jina.ai/"
	defaultTavilyBase   = "https://api.tavily.com"
)

// fetchJina asks the Jina reader for the page's HTML and extracts it
// locally, as DeerFlow's jina_ai web_fetch does (POST {"url": ...} with
// X-Return-Format: html and X-Timeout).
func (f *Fetcher) fetchJina(ctx context.Context, u *url.URL) (string, bool, error) {
	endpoint := f.opts.BaseURL
	if endpoint == "" {
		endpoint = f.opts.Endpoint
	}
	if endpoint == "" {
		endpoint = defaultJinaEndpoint
	}
	payload, _ := json.Marshal(map[string]string{"url": u.String()})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return "", false, fmt.Errorf("Request to Jina API failed: %v", err)
	}
	timeout := f.opts.timeout(defaultFetchTimeout)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Return-Format", "html")
	req.Header.Set("X-Timeout", strconv.Itoa(max(1, int(timeout.Seconds()))))
	if key := f.opts.apiKey("JINA_API_KEY"); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := f.provider.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", false, fmt.Errorf("Request to Jina API failed: %v", err)
	}
	defer resp.Body.Close()
	body, cut, err := readCapped(resp.Body, f.opts.MaxBytes)
	if err != nil {
		return "", false, fmt.Errorf("Request to Jina API failed: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := truncateRunes(string(bytes.ToValidUTF8(body, nil)), 500)
		return "", false, fmt.Errorf("Jina API returned status %d: %s", resp.StatusCode, msg)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return "", false, errors.New("Jina API returned empty response")
	}
	p, err := ExtractHTML(bytes.NewReader(bytes.ToValidUTF8(body, []byte("\uFFFD"))), u)
	if err != nil {
		return "", false, fmt.Errorf("Failed to read %s: %v", u, err)
	}
	return p.Document(), cut, nil
}

// tavilyExtract is the shape of Tavily's /extract response.
type tavilyExtract struct {
	Results []struct {
		URL        string `json:"url"`
		Title      string `json:"title"`
		RawContent string `json:"raw_content"`
	} `json:"results"`
	FailedResults []struct {
		URL   string `json:"url"`
		Error string `json:"error"`
	} `json:"failed_results"`
}

// fetchTavily extracts the page with Tavily, as DeerFlow's tavily
// web_fetch does: "# {title}\n\n{raw_content}".
func (f *Fetcher) fetchTavily(ctx context.Context, u *url.URL) (string, error) {
	key := f.opts.apiKey("TAVILY_API_KEY")
	if key == "" {
		return "", errors.New("TAVILY_API_KEY is not configured (set api_key in the web_fetch entry or the TAVILY_API_KEY environment variable)")
	}
	var out tavilyExtract
	err := postJSON(ctx, f.provider, f.opts.baseURL(defaultTavilyBase)+"/extract", key,
		map[string]any{"urls": []string{u.String()}}, f.opts.MaxBytes, &out)
	if err != nil {
		return "", fmt.Errorf("Tavily %v", err)
	}
	if len(out.FailedResults) > 0 {
		return "", errors.New(cmpOrString(out.FailedResults[0].Error, "Tavily could not extract the page"))
	}
	if len(out.Results) == 0 {
		return "", errors.New("No results found")
	}
	r := out.Results[0]
	title := cmpOrString(strings.TrimSpace(r.Title), cmpOrString(r.URL, u.String()))
	return Page{Title: title, Markdown: r.RawContent}.Document(), nil
}

// postJSON posts body as JSON with a bearer key and decodes a JSON
// response into out. Errors read "request failed: ..." or "API error:
// HTTP {code}".
func postJSON(ctx context.Context, c *http.Client, endpoint, key string, body any, maxBytes int64, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("request failed: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return doJSON(c, req, maxBytes, out)
}

// postJSONHeader posts body as JSON with the given headers (a provider's
// own key header) and decodes a JSON response into out, with postJSON's
// errors.
func postJSONHeader(ctx context.Context, c *http.Client, endpoint string, header http.Header, body any, maxBytes int64, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("request failed: %v", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	return doJSON(c, req, maxBytes, out)
}

// doJSON runs req and decodes a 2xx JSON response into out.
func doJSON(c *http.Client, req *http.Request, maxBytes int64, out any) error {
	resp, err := c.Do(req)
	if err != nil {
		if req.Context().Err() != nil {
			return req.Context().Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("request failed: %v", err)
	}
	defer resp.Body.Close()
	if maxBytes <= 0 {
		maxBytes = defaultMaxBytes
	}
	data, _, err := readCapped(resp.Body, maxBytes)
	if err != nil {
		return fmt.Errorf("request failed: %v", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("API error: HTTP %d", resp.StatusCode)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return errors.New("returned an unexpected response format")
	}
	return nil
}
