package mcptools_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/antlerhq/antler/mcptools"
)

// A huge expires_in (a "never expires" token) must be cached, not
// overflow into a past expiry that refetches the token on every request.
func TestOAuthHugeExpiresInIsCached(t *testing.T) {
	for _, v := range []any{1e12, 1e300, "1e30"} {
		ts := newTokenServer(t, func(int, url.Values) (int, map[string]any) {
			return 200, map[string]any{"access_token": "tok", "expires_in": v}
		})
		src := mcptools.NewTokenSource(oauthCfg(ts.URL), ts.Client(), func() time.Time { return time.Unix(1000, 0) })
		for range 3 {
			if _, err := src.Header(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(ts.requests()); n != 1 {
			t.Errorf("expires_in %v: %d token requests, want 1", v, n)
		}
	}
}
