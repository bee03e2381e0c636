package community

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/html/charset"

	"github.com/antlerhq/antler/community/netguard"
	"github.com/antlerhq/antler/tool"
)

//go:embed web_fetch.md
var webFetchDescription string

// The web_fetch providers.
const (
	FetchDirect = "direct" // default: Antler fetches the page itself
	FetchJina   = "jina"   // the Jina reader (r.jina.ai)
	FetchTavily = "tavily" // Tavily extract

	FetchExa         = "exa"         // Exa /contents
	FetchFirecrawl   = "firecrawl"   // Firecrawl /v2/scrape
	FetchFastCRW     = "fastcrw"     // fastCRW, Firecrawl-compatible
	FetchGroundRoute = "groundroute" // GroundRoute mode=page
	FetchInfoQuest   = "infoquest"   // the InfoQuest reader
	FetchCrawl4AI    = "crawl4ai"    // a self-hosted Crawl4AI server
	FetchBrowserless = "browserless" // Browserless /content (headless Chrome)
)

// fetchProviders lists the providers in the order of error messages.
var fetchProviders = []string{FetchDirect, FetchJina, FetchTavily, FetchExa, FetchFirecrawl, FetchFastCRW,
	FetchGroundRoute, FetchInfoQuest, FetchCrawl4AI, FetchBrowserless}

// resolvingProviders are the delegated fetchers whose target host is
// resolved and screened before the request (DeerFlow screens these
// self-hosted renderers the same way), since the renderer, not Antler,
// connects to it.
var resolvingProviders = []string{FetchCrawl4AI, FetchBrowserless, FetchFastCRW}

// Defaults of FetchOptions.
const (
	defaultFetchTimeout = 10 * time.Second
	defaultMaxChars     = 4096
	defaultMaxBytes     = 5 << 20
	defaultMaxRedirects = 10
	DefaultUserAgent    = "Mozilla/5.0 (compatible; Antler/1.0; +https://github.com/antlerhq/antler)"
)

// FetchOptions configure web_fetch. The zero value fetches directly with
// the SSRF guard on and DeerFlow's 4096-character output cap.
type FetchOptions struct {
	// Provider is "direct" (or ""), "jina", "tavily", "exa",
	// "firecrawl", "fastcrw", "groundroute", "infoquest", "crawl4ai" or
	// "browserless". APIKey, BaseURL (the Jina endpoint, default
	// https://r.jina.ai/; each provider's base otherwise, see its file),
	// Proxy and TrustEnv apply to the providers; Timeout (default 10 s,
	// 30 s for crawl4ai and browserless) applies to all.
	ProviderOptions `yaml:",inline"`
	// MaxChars caps the returned document in characters (default 4096,
	// as DeerFlow); a cut is marked at the end.
	MaxChars int `yaml:"max_chars"`
	// MaxBytes caps the bytes read from a response (default 5 MiB); the
	// rest of a larger page is not read.
	MaxBytes int64 `yaml:"max_bytes"`
	// MaxRedirects bounds the redirects followed (default 10).
	MaxRedirects int `yaml:"max_redirects"`
	// AllowPrivateAddresses turns the SSRF guard's address checks off.
	AllowPrivateAddresses bool `yaml:"allow_private_addresses"`
	// UserAgent is sent on direct fetches (default DefaultUserAgent).
	UserAgent string `yaml:"user_agent"`
	// NetworkIsolationConfirmed is accepted for DeerFlow configs of
	// delegated fetchers; Antler does not use it.
	NetworkIsolationConfirmed bool `yaml:"network_isolation_confirmed"`
	// BrowserlessOptions are Browserless's token and waits; Token is
	// Crawl4AI's bearer token too.
	BrowserlessOptions `yaml:",inline"`
	// Filter is Crawl4AI's markdown filter: "fit" (default), "raw",
	// "bm25" or "llm".
	Filter string `yaml:"filter"`
	// FetchTime and NavigationTimeout are InfoQuest's wait after the page
	// loaded and its navigation timeout, in seconds; 0 or -1 sends none.
	// InfoQuest also receives Timeout.
	FetchTime         float64 `yaml:"fetch_time"`
	NavigationTimeout float64 `yaml:"navigation_timeout"`

	// Resolver resolves host names for the guard and the dialer; nil is
	// net.DefaultResolver. Tests inject one.
	Resolver netguard.Resolver `yaml:"-"`
	// Dial replaces the final connect to a checked address (see
	// netguard.Guard.Dial); nil in production.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error) `yaml:"-"`
}

// Fetcher fetches pages and returns their readable content as markdown.
// It is safe for concurrent use; Close releases idle connections.
type Fetcher struct {
	// Immutable after NewFetcher.
	opts      FetchOptions
	guard     *netguard.Guard
	transport *http.Transport // direct fetches
	direct    *http.Client
	provider  *http.Client // jina, tavily
}

// NewFetcher validates o (the zero value means defaults) and returns a Fetcher.
func NewFetcher(o FetchOptions) (*Fetcher, error) {
	if o.Provider != "" && !slices.Contains(fetchProviders, o.Provider) {
		return nil, fmt.Errorf("unknown web_fetch provider %q (want %s)", o.Provider, strings.Join(fetchProviders, ", "))
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := o.validateWaits(); err != nil {
		return nil, err
	}
	if o.Filter != "" && !slices.Contains(crawl4aiFilters, o.Filter) {
		return nil, fmt.Errorf("filter %q: want %s", o.Filter, strings.Join(crawl4aiFilters, ", "))
	}
	if o.MaxChars < 0 || o.MaxBytes < 0 || o.MaxRedirects < 0 {
		return nil, errors.New("max_chars, max_bytes and max_redirects must not be negative")
	}
	o.MaxChars = cmpOrInt(o.MaxChars, defaultMaxChars)
	o.MaxBytes = cmpOrInt(o.MaxBytes, defaultMaxBytes)
	o.MaxRedirects = cmpOrInt(o.MaxRedirects, defaultMaxRedirects)
	o.UserAgent = cmpOrString(o.UserAgent, DefaultUserAgent)
	if o.Provider == "" {
		o.Provider = FetchDirect
	}
	if o.Provider == FetchDirect && o.Proxy != "" {
		o.logger().Warn("web_fetch: proxy is ignored by the direct fetcher; the SSRF guard must see the address it connects to", "proxy", o.Proxy)
	}
	f := &Fetcher{
		opts:  o,
		guard: &netguard.Guard{AllowPrivate: o.AllowPrivateAddresses, Resolver: o.Resolver, Action: "fetch", Dial: o.Dial},
	}
	f.transport = &http.Transport{
		Proxy:                  nil, // never: the guard must see the real peer
		DialContext:            f.guard.DialContext(&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}),
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	f.direct = &http.Client{Transport: f.transport, CheckRedirect: f.checkRedirect}
	f.provider = o.client(f.providerTimeout())
	return f, nil
}

// providerTimeout is the request timeout of the provider: the configured
// one, else 30 s for the renderers (Browserless, Crawl4AI), as DeerFlow,
// else 10 s.
func (f *Fetcher) providerTimeout() time.Duration {
	switch f.opts.Provider {
	case FetchBrowserless, FetchCrawl4AI:
		return f.opts.timeout(defaultBrowserlessTimeout)
	}
	return f.opts.timeout(defaultFetchTimeout)
}

// Close releases the fetcher's idle connections.
func (f *Fetcher) Close() error {
	f.transport.CloseIdleConnections()
	return nil
}

// Tool returns the web_fetch tool backed by f.
func (f *Fetcher) Tool() *tool.Tool {
	type input struct {
		URL string `json:"url" jsonschema:"The URL to fetch the contents of."`
	}
	return tool.New("web_fetch", strings.TrimSpace(webFetchDescription),
		func(ctx context.Context, call *tool.Call, in input) (string, error) {
			return f.Fetch(ctx, in.URL)
		})
}

// NewWebFetch returns the web_fetch tool configured by opts.
func NewWebFetch(opts FetchOptions) (*tool.Tool, error) {
	f, err := NewFetcher(opts)
	if err != nil {
		return nil, err
	}
	return f.Tool(), nil
}

// Fetch returns the readable content of the page at rawURL as a markdown
// document ("# {title}\n\n{body}"), cut to MaxChars. An error is
// model-facing (a refused URL, an HTTP status, a timeout), except the
// context's own error when ctx is done.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (string, error) {
	u, err := f.guard.CheckURLString(rawURL)
	if err != nil {
		return "", err
	}
	if slices.Contains(resolvingProviders, f.opts.Provider) {
		if _, err := f.guard.Resolve(ctx, u.Hostname()); err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", err
		}
	}
	var doc string
	var cutBytes bool
	switch f.opts.Provider {
	case FetchJina:
		doc, cutBytes, err = f.fetchJina(ctx, u)
	case FetchTavily:
		doc, err = f.fetchTavily(ctx, u)
	case FetchExa:
		doc, err = f.fetchExa(ctx, u)
	case FetchFirecrawl:
		doc, err = newFirecrawl(&f.opts.ProviderOptions, f.provider).scrape(ctx, u, f.opts.MaxBytes)
	case FetchFastCRW:
		doc, err = newFastCRW(&f.opts.ProviderOptions, f.provider).scrape(ctx, u, f.opts.MaxBytes)
	case FetchGroundRoute:
		doc, err = f.fetchGroundRoute(ctx, u)
	case FetchInfoQuest:
		doc, cutBytes, err = f.fetchInfoQuest(ctx, u)
	case FetchCrawl4AI:
		doc, cutBytes, err = f.fetchCrawl4AI(ctx, u)
	case FetchBrowserless:
		doc, cutBytes, err = f.fetchBrowserless(ctx, u)
	default:
		doc, cutBytes, err = f.fetchDirect(ctx, u)
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", err
	}
	doc, cut := truncateRunes(doc, f.opts.MaxChars)
	if cut || cutBytes {
		doc += fmt.Sprintf("\n\n[Content truncated: the page is longer than web_fetch returns (max_chars %d, max_bytes %d).]",
			f.opts.MaxChars, f.opts.MaxBytes)
	}
	return doc, nil
}

type redirectLimitError struct{ n int }

func (e *redirectLimitError) Error() string { return fmt.Sprintf("stopped after %d redirects", e.n) }

func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.opts.MaxRedirects {
		return &redirectLimitError{f.opts.MaxRedirects}
	}
	return f.guard.CheckURL(req.URL)
}

func (f *Fetcher) fetchDirect(ctx context.Context, u *url.URL) (string, bool, error) {
	timeout := f.opts.timeout(defaultFetchTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", false, &netguard.Error{Kind: netguard.KindHost}
	}
	req.Header.Set("User-Agent", f.opts.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")
	resp, err := f.direct.Do(req)
	if err != nil {
		return "", false, f.transportError(ctx, u, err, timeout)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", false, fmt.Errorf("Failed to fetch %s: HTTP %s", u, resp.Status)
	}
	body, cut, err := readCapped(resp.Body, f.opts.MaxBytes)
	if err != nil {
		return "", false, f.transportError(ctx, u, err, timeout)
	}
	doc, err := renderBody(body, resp.Header.Get("Content-Type"), resp.Request.URL)
	return doc, cut, err
}

// transportError turns a client error into the model-facing error.
func (f *Fetcher) transportError(ctx context.Context, u *url.URL, err error, timeout time.Duration) error {
	var ge *netguard.Error
	if errors.As(err, &ge) {
		return ge
	}
	var re *redirectLimitError
	if errors.As(err, &re) {
		return fmt.Errorf("Failed to fetch %s: %v", u, re)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("Failed to fetch %s: timed out after %s", u, timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("Failed to fetch %s: %v", u, err)
}

// readCapped reads at most max bytes of r and reports whether there was
// more.
func readCapped(r io.Reader, max int64) ([]byte, bool, error) {
	body, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > max {
		return body[:max], true, nil
	}
	return body, false, nil
}

// renderBody decodes body to UTF-8 (from the Content-Type charset, a BOM
// or a <meta> declaration, falling back to sniffing) and renders it: HTML
// through ExtractHTML, other text as it is.
func renderBody(body []byte, contentType string, pageURL *url.URL) (string, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "", errors.New("Empty response")
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType == "" {
		mediaType, _, _ = mime.ParseMediaType(http.DetectContentType(body))
		contentType = ""
	}
	if !isHTML(mediaType) && !isText(mediaType) {
		return "", fmt.Errorf("Cannot read %s content from %s: web_fetch reads HTML and text pages", mediaType, pageURL)
	}
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		r = bytes.NewReader(body)
	}
	if isHTML(mediaType) {
		p, err := ExtractHTML(r, pageURL)
		if err != nil {
			return "", fmt.Errorf("Failed to read %s: %v", pageURL, err)
		}
		return p.Document(), nil
	}
	text, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("Failed to read %s: %v", pageURL, err)
	}
	return Page{Title: pageURL.String(), Markdown: strings.TrimSpace(string(bytes.ToValidUTF8(text, []byte("\uFFFD"))))}.Document(), nil
}

func isHTML(mediaType string) bool {
	return mediaType == "text/html" || mediaType == "application/xhtml+xml"
}

func isText(mediaType string) bool {
	if strings.HasPrefix(mediaType, "text/") {
		return true
	}
	switch mediaType {
	case "application/json", "application/xml", "application/javascript", "application/x-yaml", "application/yaml":
		return true
	}
	return strings.HasSuffix(mediaType, "+json") || strings.HasSuffix(mediaType, "+xml")
}

func cmpOrInt[T int | int64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

func cmpOrString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
