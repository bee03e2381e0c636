package community

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Browserless defaults, as DeerFlow's browserless tools.
const (
	defaultBrowserlessBase    = "http://localhost:3032"
	defaultBrowserlessTimeout = 30 * time.Second
	defaultSelectorTimeoutMS  = 5000
)

// BrowserlessOptions are the keys of a Browserless instance shared by
// web_fetch and web_capture. The zero value waits for nothing beyond the
// page load.
type BrowserlessOptions struct {
	// Token authenticates with Browserless (required by its cloud,
	// optional self-hosted); "" falls back to BROWSERLESS_TOKEN, as
	// DeerFlow. It is sent as the ?token= query parameter.
	Token string `yaml:"token"`
	// WaitForEvent is a page event to wait for ("load", "networkidle").
	WaitForEvent string `yaml:"wait_for_event"`
	// WaitForTimeoutMS is an extra wait after the page loaded.
	WaitForTimeoutMS int `yaml:"wait_for_timeout_ms"`
	// WaitForSelector is a CSS selector to wait for, for at most
	// WaitForSelectorTimeoutMS (default 5000).
	WaitForSelector          string `yaml:"wait_for_selector"`
	WaitForSelectorTimeoutMS int    `yaml:"wait_for_selector_timeout_ms"`
}

func (b *BrowserlessOptions) validateWaits() error {
	if b.WaitForTimeoutMS < 0 || b.WaitForSelectorTimeoutMS < 0 {
		return fmt.Errorf("wait_for_timeout_ms and wait_for_selector_timeout_ms must not be negative")
	}
	return nil
}

// token returns the configured token or BROWSERLESS_TOKEN.
func (b *BrowserlessOptions) token(getenv func(string) string) string {
	if t := strings.TrimSpace(b.Token); t != "" {
		return t
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	return strings.TrimSpace(getenv("BROWSERLESS_TOKEN"))
}

// waits adds the wait keys of Browserless's /content and /screenshot
// bodies to body.
func (b *BrowserlessOptions) waits(body map[string]any) {
	if b.WaitForEvent != "" {
		body["waitForEvent"] = map[string]any{"event": b.WaitForEvent}
	}
	if b.WaitForTimeoutMS > 0 {
		body["waitForTimeout"] = b.WaitForTimeoutMS
	}
	if b.WaitForSelector != "" {
		body["waitForSelector"] = map[string]any{"selector": b.WaitForSelector,
			"timeout": cmp.Or(b.WaitForSelectorTimeoutMS, defaultSelectorTimeoutMS)}
	}
}

// browserlessEndpoint is base + path with the token as a query parameter.
func browserlessEndpoint(base, path, token string) string {
	e := strings.TrimRight(base, "/") + path
	if token != "" {
		e += "?" + url.Values{"token": {token}}.Encode()
	}
	return e
}

// targetWarning is DeerFlow's note when Browserless rendered the page but
// the page itself answered with an error status (its X-Response-Code).
func targetWarning(h http.Header) string {
	code := strings.TrimSpace(h.Get("X-Response-Code"))
	if code == "" || code[0] == '2' || code[0] == '3' {
		return ""
	}
	return "warning: target page responded " + strings.TrimSpace(code+" "+h.Get("X-Response-Status"))
}

// fetchBrowserless renders the page with Browserless's POST /content and
// extracts the rendered HTML locally. When the target page answered with
// an error status, the document starts with a warning line saying so.
func (f *Fetcher) fetchBrowserless(ctx context.Context, u *url.URL) (string, bool, error) {
	body := map[string]any{"url": u.String()}
	f.opts.BrowserlessOptions.waits(body)
	payload, _ := json.Marshal(body)
	endpoint := browserlessEndpoint(f.opts.baseURL(defaultBrowserlessBase), "/content", f.opts.BrowserlessOptions.token(f.opts.Getenv))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return "", false, fmt.Errorf("Browserless request failed: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cache-Control", "no-cache")
	data, cut, header, err := f.providerBody(req, "Browserless")
	if err != nil {
		return "", false, err
	}
	p, err := ExtractHTML(bytes.NewReader(bytes.ToValidUTF8(data, []byte("\uFFFD"))), u)
	if err != nil {
		return "", false, fmt.Errorf("Failed to read %s: %v", u, err)
	}
	doc := p.Document()
	if w := targetWarning(header); w != "" {
		doc = "(" + w + ")\n\n" + doc
	}
	return doc, cut, nil
}
