package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
)

// tokenServer is an OAuth token endpoint that records the forms it got.
type tokenServer struct {
	*httptest.Server
	mu    sync.Mutex
	forms []url.Values
	reply func(n int, form url.Values) (int, map[string]any)
}

func newTokenServer(t *testing.T, reply func(n int, form url.Values) (int, map[string]any)) *tokenServer {
	ts := &tokenServer{reply: reply}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		ts.mu.Lock()
		ts.forms = append(ts.forms, r.PostForm)
		n := len(ts.forms)
		ts.mu.Unlock()
		code, body := ts.reply(n, r.PostForm)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tokenServer) requests() []url.Values {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]url.Values(nil), ts.forms...)
}

func oauthCfg(tokenURL string) config.OAuth {
	return config.OAuth{Enabled: true, TokenURL: tokenURL, GrantType: "client_credentials", ClientID: "id", ClientSecret: "secret",
		TokenField: "access_token", TokenTypeField: "token_type", ExpiresInField: "expires_in", DefaultTokenType: "Bearer", RefreshSkewSeconds: 60}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// OAuth token caching, reserved fields that extra
// params cannot override, rotated refresh tokens kept in memory,
// concurrent callers without deadlock, a cancelled waiter that does not
// leak the lock, and one failing server that does not drop the others'
// headers.
func TestOAuth(t *testing.T) {
	t.Run("caching and refresh skew", func(t *testing.T) {
		ts := newTokenServer(t, func(n int, _ url.Values) (int, map[string]any) {
			return 200, map[string]any{"access_token": fmt.Sprintf("tok%d", n), "expires_in": 120}
		})
		clock := &fakeClock{now: time.Unix(1000, 0)}
		src := mcptools.NewTokenSource(oauthCfg(ts.URL), ts.Client(), clock.Now)
		for range 3 {
			if h, err := src.Header(t.Context()); err != nil || h != "Bearer tok1" {
				t.Fatalf("header = %q, %v", h, err)
			}
		}
		clock.Add(59 * time.Second) // 61 s left > 60 s skew: still cached
		if h, _ := src.Header(t.Context()); h != "Bearer tok1" {
			t.Errorf("before skew: %q", h)
		}
		clock.Add(time.Second) // 60 s left: refresh
		if h, _ := src.Header(t.Context()); h != "Bearer tok2" {
			t.Errorf("inside skew: %q", h)
		}
		if n := len(ts.requests()); n != 2 {
			t.Errorf("%d token requests, want 2", n)
		}
	})

	t.Run("reserved fields win over extra_token_params", func(t *testing.T) {
		ts := newTokenServer(t, func(int, url.Values) (int, map[string]any) {
			return 200, map[string]any{"access_token": "a", "token_type": "MAC"}
		})
		cfg := oauthCfg(ts.URL)
		cfg.Scope, cfg.Audience = "read", "api"
		cfg.ExtraTokenParams = map[string]string{"grant_type": "password", "client_id": "evil", "scope": "admin", "resource": "r1"}
		src := mcptools.NewTokenSource(cfg, ts.Client(), time.Now)
		if h, err := src.Header(t.Context()); err != nil || h != "MAC a" {
			t.Fatalf("header = %q, %v", h, err)
		}
		want := url.Values{"grant_type": {"client_credentials"}, "client_id": {"id"}, "client_secret": {"secret"},
			"scope": {"read"}, "audience": {"api"}, "resource": {"r1"}}
		if diff := cmp.Diff(want, ts.requests()[0]); diff != "" {
			t.Errorf("form (-want +got):\n%s", diff)
		}
	})

	t.Run("rotated refresh token kept in memory", func(t *testing.T) {
		ts := newTokenServer(t, func(n int, _ url.Values) (int, map[string]any) {
			return 200, map[string]any{"access_token": fmt.Sprint("a", n), "refresh_token": fmt.Sprint("r", n+1), "expires_in": "1"}
		})
		cfg := oauthCfg(ts.URL)
		cfg.GrantType, cfg.RefreshToken, cfg.ClientSecret = "refresh_token", "r1", ""
		clock := &fakeClock{now: time.Unix(0, 0)}
		src := mcptools.NewTokenSource(cfg, ts.Client(), clock.Now)
		for range 3 {
			if _, err := src.Header(t.Context()); err != nil {
				t.Fatal(err)
			}
			clock.Add(2 * time.Second)
		}
		var got []string
		for _, f := range ts.requests() {
			got = append(got, f.Get("grant_type")+":"+f.Get("refresh_token"))
		}
		if diff := cmp.Diff([]string{"refresh_token:r1", "refresh_token:r2", "refresh_token:r3"}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("errors", func(t *testing.T) {
		ts := newTokenServer(t, func(n int, _ url.Values) (int, map[string]any) {
			if n == 1 {
				return 500, map[string]any{"error": "down"}
			}
			return 200, map[string]any{"token": "x"}
		})
		src := mcptools.NewTokenSource(oauthCfg(ts.URL), ts.Client(), time.Now)
		if _, err := src.Header(t.Context()); err == nil || err.Error() != `OAuth token request failed: HTTP 500 {"error":"down"}` {
			t.Errorf("500: %v", err)
		}
		if _, err := src.Header(t.Context()); err == nil || err.Error() != "OAuth token response missing 'access_token'" {
			t.Errorf("missing field: %v", err)
		}
		cfg := oauthCfg(ts.URL)
		cfg.ClientSecret = ""
		if _, err := mcptools.NewTokenSource(cfg, ts.Client(), time.Now).Header(t.Context()); err == nil ||
			err.Error() != "OAuth client_credentials requires client_id and client_secret" {
			t.Errorf("no secret: %v", err)
		}
		cfg = oauthCfg(ts.URL)
		cfg.GrantType = "refresh_token"
		if _, err := mcptools.NewTokenSource(cfg, ts.Client(), time.Now).Header(t.Context()); err == nil ||
			err.Error() != "OAuth refresh_token grant requires refresh_token" {
			t.Errorf("no refresh token: %v", err)
		}
	})

	t.Run("concurrent callers share one request", func(t *testing.T) {
		ts := newTokenServer(t, func(int, url.Values) (int, map[string]any) {
			time.Sleep(20 * time.Millisecond)
			return 200, map[string]any{"access_token": "shared"}
		})
		src := mcptools.NewTokenSource(oauthCfg(ts.URL), ts.Client(), time.Now)
		var wg sync.WaitGroup
		var bad atomic.Int32
		for range 20 {
			wg.Go(func() {
				if h, err := src.Header(t.Context()); err != nil || h != "Bearer shared" {
					bad.Add(1)
				}
			})
		}
		wg.Wait()
		if bad.Load() != 0 || len(ts.requests()) != 1 {
			t.Errorf("bad=%d requests=%d", bad.Load(), len(ts.requests()))
		}
	})

	t.Run("cancelled waiter does not leak the lock", func(t *testing.T) {
		ts := newTokenServer(t, func(int, url.Values) (int, map[string]any) { return 200, map[string]any{"access_token": "x"} })
		src := mcptools.NewTokenSource(oauthCfg(ts.URL), ts.Client(), time.Now)
		release := src.Hold()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		if _, err := src.Header(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("waiter: %v", err)
		}
		release()
		done := make(chan error, 1)
		go func() { _, err := src.Header(t.Context()); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("lock leaked by the cancelled waiter")
		}
	})

	t.Run("one failing server does not drop the others' headers", func(t *testing.T) {
		good := newTokenServer(t, func(int, url.Values) (int, map[string]any) { return 200, map[string]any{"access_token": "good"} })
		bad := newTokenServer(t, func(int, url.Values) (int, map[string]any) { return 401, map[string]any{"error": "invalid_client"} })
		var seen sync.Map
		mcpURL := func(name string) string {
			srv := newTestServer()
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen.Store(name+" "+r.Header.Get("X-Team"), r.Header.Get("Authorization"))
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(hs.Close)
			return hs.URL
		}
		server := func(name, tokenURL string) string {
			return fmt.Sprintf(`{"type": "http", "url": %q, "headers": {"X-Team": "%s"},
				"oauth": {"enabled": true, "token_url": %q, "client_id": "id", "client_secret": "s"}}`, mcpURL(name), name, tokenURL)
		}
		ext := parseExt(t, `{"a": `+server("a", good.URL)+`, "b": `+server("b", bad.URL)+`, "c": `+server("c", good.URL)+`}`)
		m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext)})
		tools, err := m.Tools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a_echo", "a_sleep", "c_echo", "c_sleep"}, names(tools)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		for _, k := range []string{"a a", "c c"} {
			if v, _ := seen.Load(k); v != "Bearer good" {
				t.Errorf("server %s saw Authorization %v", k, v)
			}
		}
		if _, ok := seen.Load("b b"); ok {
			t.Error("server b was contacted without a token")
		}
		if st := statusByName(m)["b"]; st.State != mcptools.StateFailed || st.Err == nil {
			t.Errorf("b: %+v", st)
		}
	})
}
