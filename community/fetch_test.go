package community

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/tool"
)

const refused = "Refusing to fetch a private, loopback, or metadata address"

// publicIP is what the fake resolver returns for site.test; the test
// dialer routes it to the loopback test server, so no test ever connects
// to a non-loopback address.
const publicIP = "93.184.216.34"

type fakeResolver map[string][]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ss, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ss {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

// site is a local web server with real pages, reached as http://site.test/.
type site struct {
	srv  *httptest.Server
	port string
}

func serveFile(t *testing.T, name, contentType string) http.HandlerFunc {
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.Write(data)
	}
}

func newSite(t *testing.T) *site {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/article", serveFile(t, "article.html", "text/html; charset=utf-8"))
	mux.Handle("/latin1", serveFile(t, "latin1.html", "text/html; charset=iso-8859-1"))
	mux.Handle("/sjis", serveFile(t, "sjis.html", "text/html"))
	mux.Handle("/bogus-charset", serveFile(t, "article.html", "text/html; charset=x-klingon"))
	mux.Handle("/no-content-type", serveFile(t, "article.html", ""))
	mux.Handle("/badutf8", serveFile(t, "badutf8.html", "text/html; charset=utf-8"))
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "just text, 鹿\n")
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n...."))
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><head><title>Huge</title></head><body><article>")
		para := "<p>" + strings.Repeat("The herd walks on through the valley. ", 30) + "</p>\n"
		for written := 0; written < 32<<20; written += len(para) {
			if _, err := io.WriteString(w, para); err != nil {
				return // the client stopped reading
			}
		}
	})
	// /r/N redirects N times, then lands on the article.
	mux.HandleFunc("/r/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n <= 0 {
			http.Redirect(w, r, "/article", http.StatusFound)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusMovedPermanently)
	})
	mux.HandleFunc("/redirect-to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("target"), http.StatusFound)
	})
	mux.HandleFunc("/missing", http.NotFound)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return &site{srv: srv, port: port}
}

// guarded returns fetch options with the SSRF guard on, where site.test
// resolves to a public-looking address that the dialer routes to the
// local server, and rebind.test resolves to loopback.
func (s *site) guarded(t *testing.T) *FetchOptions {
	return &FetchOptions{
		Resolver: fakeResolver{"site.test": {publicIP}, "rebind.test": {"127.0.0.1"}, "rebind6.test": {"::1"}},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr != net.JoinHostPort(publicIP, "80") {
				t.Errorf("test tried to connect to %s", addr)
				return nil, errors.New("test network: no route")
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", s.srv.Listener.Addr().String())
		},
	}
}

func fetch(t *testing.T, opts *FetchOptions, url string) (string, error) {
	t.Helper()
	f, err := NewFetcher(*opts)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Fetch(t.Context(), url)
}

func TestFetchPages(t *testing.T) {
	s := newSite(t)
	tests := []struct {
		name  string
		path  string
		opts  func(*FetchOptions)
		want  []string
		avoid []string
	}{
		{"article", "/article", nil,
			[]string{"# The Migration of Antlered Deer\n\n", "## Why they move", "[snowfall study](http://site.test/studies/snowfall)"},
			[]string{"premium binoculars", "Content truncated"}},
		{"latin1 from header", "/latin1", nil, []string{"Le café naïve coûte deux euros."}, []string{"\uFFFD"}},
		{"shift_jis from meta", "/sjis", nil, []string{"# 鹿の移動", "鹿は秋に谷へ移動します。"}, []string{"\uFFFD"}},
		{"bogus charset label", "/bogus-charset", nil, []string{"## Why they move"}, nil},
		{"no content type", "/no-content-type", nil, []string{"## Why they move"}, nil},
		{"invalid utf-8 bytes", "/badutf8", nil, []string{"Valid text then broken bytes.", "and more text"}, nil},
		{"plain text", "/plain", nil, []string{"# http://site.test/plain\n\njust text, 鹿"}, nil},
		{"redirect chain", "/r/4", nil, []string{"## Why they move"}, nil},
		{"redirect chain at limit", "/r/2", func(o *FetchOptions) { o.MaxRedirects = 3 }, []string{"## Why they move"}, nil},
		{"output cap", "/article", func(o *FetchOptions) { o.MaxChars = 100 }, []string{"# The Migration", "[Content truncated"}, []string{"Why they move"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := s.guarded(t)
			if tt.opts != nil {
				tt.opts(opts)
			}
			got, err := fetch(t, opts, "http://site.test"+tt.path)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("result lacks %q:\n%s", w, got)
				}
			}
			for _, a := range tt.avoid {
				if strings.Contains(got, a) {
					t.Errorf("result has %q:\n%s", a, got)
				}
			}
		})
	}
}

func TestFetchHugeBody(t *testing.T) {
	s := newSite(t)
	opts := s.guarded(t)
	opts.MaxBytes = 64 << 10
	opts.MaxChars = 1 << 20
	got, err := fetch(t, opts, "http://site.test/huge")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "The herd walks on") || !strings.Contains(got, "[Content truncated") {
		t.Errorf("unexpected result (%d chars): %.200s", len(got), got)
	}
	if len(got) > 80<<10 {
		t.Errorf("result is %d bytes, more than was read", len(got))
	}
}

func TestFetchErrors(t *testing.T) {
	s := newSite(t)
	tests := []struct {
		name string
		url  string
		opts func(*FetchOptions)
		want string
	}{
		{"404", "http://site.test/missing", nil, "Failed to fetch http://site.test/missing: HTTP 404 Not Found"},
		{"image", "http://site.test/image", nil, "Cannot read image/png content from http://site.test/image"},
		{"empty", "http://site.test/empty", nil, "Empty response"},
		{"too many redirects", "http://site.test/r/12", nil, "Failed to fetch http://site.test/r/12: stopped after 10 redirects"},
		{"redirect limit option", "http://site.test/r/3", func(o *FetchOptions) { o.MaxRedirects = 2 }, "stopped after 2 redirects"},
		{"timeout", "http://site.test/slow", func(o *FetchOptions) { o.Timeout = 0.2 }, "Failed to fetch http://site.test/slow: timed out after 200ms"},
		{"scheme", "ftp://site.test/file", nil, "Only http:// and https:// URLs are supported"},
		{"no scheme", "site.test/article", nil, "Only http:// and https:// URLs are supported"},
		{"unresolvable", "http://nowhere.test/", nil, "URL host could not be resolved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := s.guarded(t)
			if tt.opts != nil {
				tt.opts(opts)
			}
			_, err := fetch(t, opts, tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Fetch error = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestFetchSSRFRefusals proves the guard refuses loopback (v4 and v6),
// the metadata address, 10/8 and a name resolving to loopback, both when
// asked directly and behind a redirect from an allowed page.
func TestFetchSSRFRefusals(t *testing.T) {
	s := newSite(t)
	targets := []struct{ name, url string }{
		{"127.0.0.1", "http://127.0.0.1:" + s.port + "/article"},
		{"::1", "http://[::1]:" + s.port + "/article"},
		{"169.254.169.254", "http://169.254.169.254/latest/meta-data/"},
		{"10.0.0.1", "http://10.0.0.1/"},
		{"10.255.1.2 https", "https://10.255.1.2:8443/admin"},
		{"name resolving to 127.0.0.1", "http://rebind.test:" + s.port + "/article"},
		{"name resolving to ::1", "http://rebind6.test:" + s.port + "/article"},
		{"localhost", "http://localhost:" + s.port + "/article"},
		{"metadata name", "http://metadata.google.internal/computeMetadata/v1/"},
		{"mapped v6", "http://[::ffff:127.0.0.1]:" + s.port + "/"},
	}
	for _, tg := range targets {
		t.Run("direct "+tg.name, func(t *testing.T) {
			_, err := fetch(t, s.guarded(t), tg.url)
			if err == nil || err.Error() != refused {
				t.Errorf("Fetch(%s) error = %v, want %q", tg.url, err, refused)
			}
		})
		t.Run("redirect to "+tg.name, func(t *testing.T) {
			_, err := fetch(t, s.guarded(t), "http://site.test/redirect-to?target="+tg.url)
			if err == nil || err.Error() != refused {
				t.Errorf("redirect to %s: error = %v, want %q", tg.url, err, refused)
			}
		})
	}
}

// TestFetchAllowPrivate shows the opt-out: with allow_private_addresses
// the loopback server is reachable directly, by a name resolving to it,
// and behind a redirect.
func TestFetchAllowPrivate(t *testing.T) {
	s := newSite(t)
	opts := &FetchOptions{AllowPrivateAddresses: true, Resolver: fakeResolver{"rebind.test": {"127.0.0.1"}}}
	base := "http://127.0.0.1:" + s.port
	for _, u := range []string{
		base + "/article",
		"http://rebind.test:" + s.port + "/article",
		base + "/redirect-to?target=http://rebind.test:" + s.port + "/r/1",
	} {
		got, err := fetch(t, opts, u)
		if err != nil {
			t.Errorf("Fetch(%s): %v", u, err)
			continue
		}
		if !strings.Contains(got, "## Why they move") {
			t.Errorf("Fetch(%s) = %.200s", u, got)
		}
	}
}

func TestWebFetchTool(t *testing.T) {
	s := newSite(t)
	f, err := NewFetcher(*s.guarded(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tl := f.Tool()
	if tl.Name != "web_fetch" || !strings.Contains(tl.Description, "markdown") {
		t.Errorf("tool = %q %q", tl.Name, tl.Description)
	}
	call := &tool.Call{Name: "web_fetch"}
	res, err := tl.Handler(t.Context(), call, json.RawMessage(`{"url":"http://site.test/article"}`))
	if err != nil || res.IsError || !strings.HasPrefix(res.TextContent(), "# The Migration") {
		t.Errorf("ok call: %v %+v", err, res)
	}
	res, err = tl.Handler(t.Context(), call, json.RawMessage(`{"url":"http://169.254.169.254/"}`))
	if err != nil || !res.IsError || res.TextContent() != "Error: "+refused {
		t.Errorf("refused call: %v %q", err, res.TextContent())
	}
	res, err = tl.Handler(t.Context(), call, json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.TextContent(), "url") {
		t.Errorf("missing url: %v %q", err, res.TextContent())
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := tl.Handler(ctx, call, json.RawMessage(`{"url":"http://site.test/slow"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: err = %v, want context.Canceled", err)
	}
}

func TestNewFetcherRejectsBadOptions(t *testing.T) {
	for _, o := range []FetchOptions{
		{ProviderOptions: ProviderOptions{Provider: "carrier-pigeon"}},
		{MaxChars: -1},
		{ProviderOptions: ProviderOptions{BaseURL: "ftp://x"}},
		{ProviderOptions: ProviderOptions{BaseURL: "http://a", Endpoint: "http://b"}},
	} {
		if _, err := NewFetcher(o); err == nil {
			t.Errorf("NewFetcher(*%+v) = nil error", o)
		}
	}
}
