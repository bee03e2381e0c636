package community

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// DuckDuckGo's public endpoints.
const (
	defaultDDGHTMLBase = "https://html.duckduckgo.com" // web results: POST /html/
	defaultDDGBase     = "https://duckduckgo.com"      // images: GET / (token), /i.js
)

// maxDDGPages bounds the result pages read for one query.
const maxDDGPages = 5

// ddg searches DuckDuckGo's keyless HTML endpoint.
type ddg struct {
	opts   *SearchOptions
	client *http.Client
}

func newDDG(o *SearchOptions, c *http.Client) *ddg { return &ddg{opts: o, client: c} }

// ddgSafe maps safesearch to DuckDuckGo's kp parameter.
func ddgSafe(s string) string {
	switch s {
	case "on", "strict":
		return "1"
	case "off":
		return "-2"
	}
	return "-1"
}

func (d *ddg) search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	endpoint := d.opts.baseURL(defaultDDGHTMLBase) + "/html/"
	form := url.Values{
		"q":  {query},
		"kl": {cmpOrString(d.opts.Region, "wt-wt")},
		"kp": {ddgSafe(d.opts.SafeSearch)},
		"b":  {""},
	}
	var out []SearchResult
	seen := map[string]bool{}
	for page := 0; page < maxDDGPages && len(out) < n && form != nil; page++ {
		doc, err := d.post(ctx, endpoint, form)
		if err != nil {
			return nil, err
		}
		results, next := parseDDGHTML(doc)
		for _, r := range results {
			if !seen[r.URL] {
				seen[r.URL] = true
				out = append(out, r)
			}
		}
		if len(results) == 0 {
			break
		}
		form = next
	}
	return out, nil
}

func (d *ddg) post(ctx context.Context, endpoint string, form url.Values) (*html.Node, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, providerErrorf("DuckDuckGo request failed: %v", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", searchUserAgent)
	req.Header.Set("Referer", d.opts.baseURL(defaultDDGHTMLBase)+"/")
	resp, err := d.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, providerErrorf("DuckDuckGo request failed: %v", unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// DuckDuckGo answers a rate-limited client with 202 and a
		// challenge page.
		return nil, providerErrorf("DuckDuckGo returned HTTP %d", resp.StatusCode)
	}
	doc, err := html.Parse(io.LimitReader(resp.Body, defaultMaxBytes))
	if err != nil {
		return nil, providerErrorf("DuckDuckGo returned an unreadable page: %v", err)
	}
	return doc, nil
}

// parseDDGHTML reads the organic results of a DuckDuckGo HTML result page
// (ads skipped) and the form fields of its "Next" page, if any.
func parseDDGHTML(doc *html.Node) ([]SearchResult, url.Values) {
	var out []SearchResult
	var next url.Values
	walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch {
		case n.DataAtom == atom.Div && hasClass(n, "result") && !hasClass(n, "result--ad"):
			if r, ok := ddgResult(n); ok {
				out = append(out, r)
			}
			return false
		case n.DataAtom == atom.Form && next == nil && isNextForm(n):
			next = formValues(n)
			return false
		}
		return true
	})
	return out, next
}

func ddgResult(n *html.Node) (SearchResult, bool) {
	var r SearchResult
	walk(n, func(c *html.Node) bool {
		if c.Type != html.ElementNode {
			return true
		}
		switch {
		case hasClass(c, "result__a") && r.URL == "":
			r.URL = ddgUnwrap(attr(c, "href"))
			r.Title = collapse(textOf(c))
			return false
		case hasClass(c, "result__snippet") && r.Content == "":
			r.Content = collapse(textOf(c))
			return false
		}
		return true
	})
	if r.URL == "" || r.Title == "" {
		return r, false
	}
	return r, true
}

// ddgUnwrap returns the target of a DuckDuckGo redirect link
// (//duckduckgo.com/l/?uddg=...), or href itself; ad links ("/y.js") are
// dropped.
func ddgUnwrap(href string) string {
	href = strings.TrimSpace(href)
	if strings.HasPrefix(href, "//") {
		href = "https:" + href
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if strings.HasSuffix(u.Hostname(), "duckduckgo.com") {
		if strings.HasPrefix(u.Path, "/y.js") {
			return ""
		}
		if t := u.Query().Get("uddg"); t != "" {
			return t
		}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	return href
}

func isNextForm(form *html.Node) bool {
	found := false
	walk(form, func(c *html.Node) bool {
		if c.DataAtom == atom.Input && strings.EqualFold(attr(c, "type"), "submit") &&
			strings.EqualFold(strings.TrimSpace(attr(c, "value")), "next") {
			found = true
		}
		return !found
	})
	return found
}

func formValues(form *html.Node) url.Values {
	v := url.Values{}
	walk(form, func(c *html.Node) bool {
		if c.DataAtom == atom.Input && strings.EqualFold(attr(c, "type"), "hidden") && attr(c, "name") != "" {
			v.Add(attr(c, "name"), attr(c, "value"))
		}
		return true
	})
	return v
}

// walk visits n and its descendants depth first; f returns false to skip
// a node's children.
func walk(n *html.Node, f func(*html.Node) bool) {
	if !f(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// vqdPattern finds the query token DuckDuckGo embeds in its result page,
// which the image endpoint requires.
var vqdPattern = regexp.MustCompile(`vqd=["']?([0-9A-Za-z_-]+)`)

// ddgImageResponse is the shape of DuckDuckGo's i.js response.
type ddgImageResponse struct {
	Results []struct {
		Title     string `json:"title"`
		Image     string `json:"image"`
		Thumbnail string `json:"thumbnail"`
		URL       string `json:"url"`
		Width     int    `json:"width"`
		Height    int    `json:"height"`
		Source    string `json:"source"`
	} `json:"results"`
	Next string `json:"next"`
}

func (d *ddg) images(ctx context.Context, q ImageQuery) ([]ImageResult, error) {
	base := d.opts.baseURL(defaultDDGBase)
	region := cmpOrString(d.opts.Region, "wt-wt")
	vqd, err := d.vqd(ctx, base, q.Query)
	if err != nil {
		return nil, err
	}
	filters := fmt.Sprintf("size:%s,color:%s,type:%s,layout:%s,license:%s", q.Size, q.Color, q.Type, q.Layout, q.License)
	params := url.Values{
		"l": {region}, "o": {"json"}, "q": {q.Query}, "vqd": {vqd},
		"f": {filters}, "p": {ddgSafe(d.opts.SafeSearch)},
	}
	endpoint := base + "/i.js?" + params.Encode()
	header := http.Header{"User-Agent": {searchUserAgent}, "Referer": {base + "/"}}
	var out []ImageResult
	for page := 0; page < maxDDGPages && len(out) < q.MaxResults && endpoint != ""; page++ {
		var resp ddgImageResponse
		if err := getJSON(ctx, d.client, endpoint, header, &resp); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, providerErrorf("DuckDuckGo images %v", err)
		}
		for _, r := range resp.Results {
			img := ImageResult{Title: r.Title, ImageURL: r.Image, ThumbnailURL: r.Thumbnail,
				SourceURL: r.URL, Width: r.Width, Height: r.Height}
			if q.keep(&img) {
				out = append(out, img)
			}
		}
		endpoint = ""
		if resp.Next != "" && len(resp.Results) > 0 {
			endpoint = base + "/" + strings.TrimPrefix(resp.Next, "/") + "&vqd=" + url.QueryEscape(vqd)
		}
	}
	return out, nil
}

func (d *ddg) vqd(ctx context.Context, base, query string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		base+"/?"+url.Values{"q": {query}, "iax": {"images"}, "ia": {"images"}}.Encode(), nil)
	if err != nil {
		return "", providerErrorf("DuckDuckGo images request failed: %v", err)
	}
	req.Header.Set("User-Agent", searchUserAgent)
	resp, err := d.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", providerErrorf("DuckDuckGo images request failed: %v", unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, _, err := readCapped(resp.Body, 2<<20)
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", providerErrorf("DuckDuckGo images returned HTTP %d", resp.StatusCode)
	}
	m := vqdPattern.FindSubmatch(body)
	if m == nil {
		return "", providerErrorf("DuckDuckGo images: no search token in the response")
	}
	return string(m[1]), nil
}
