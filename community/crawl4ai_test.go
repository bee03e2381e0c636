package community

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// crawl4aiAPI answers in the shape of Crawl4AI's POST /md (bearer token
// required, as Crawl4AI >= 0.9).
func crawl4aiAPI(t *testing.T) (string, *[]apiRequest) {
	srv, got := fakeAPI(t, func(w http.ResponseWriter, r apiRequest) (int, string) {
		if r.Path != "/md" {
			return 404, `{"detail":"Not Found"}`
		}
		if r.Header.Get("Authorization") != "Bearer c4-token" {
			return 401, `{"detail":"Not authenticated"}`
		}
		if r.Body["url"] == "https://fail.example/" {
			return 200, `{"url":"https://fail.example/","filter":"fit","markdown":"","success":false}`
		}
		return 200, `{"url":"https://notes.example/deer","filter":"bm25","query":null,"cache":"0","markdown":"# Red deer\n\nEvery autumn, herds move.","success":true}`
	})
	return srv.URL, got
}

func TestCrawl4AIFetch(t *testing.T) {
	base, got := crawl4aiAPI(t)
	opts := &FetchOptions{ProviderOptions: ProviderOptions{Provider: "crawl4ai", BaseURL: base, Getenv: noEnv},
		BrowserlessOptions: BrowserlessOptions{Token: "c4-token"}, Filter: "bm25",
		Resolver: fakeResolver{"notes.example": {publicIP}, "fail.example": {publicIP}, "intranet.test": {"192.168.1.5"}}}
	doc, err := fetch(t, opts, "https://notes.example/deer")
	if err != nil || doc != "# Red deer\n\nEvery autumn, herds move." {
		t.Errorf("fetch = %q, %v", doc, err)
	}
	if d := cmp.Diff(map[string]any{"url": "https://notes.example/deer", "f": "bm25"}, (*got)[0].Body); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
	for name, tc := range map[string]struct{ url, token, want string }{
		"failure":      {"https://fail.example/", "c4-token", "Crawl4AI reported failure for https://fail.example/"},
		"no token":     {"https://notes.example/deer", "", `Crawl4AI returned HTTP 401: {"detail":"Not authenticated"}`},
		"private host": {"https://intranet.test/", "c4-token", refused},
	} {
		t.Run(name, func(t *testing.T) {
			o := *opts
			o.Token = tc.token
			if _, err := fetch(t, &o, tc.url); err == nil || err.Error() != tc.want {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
	if _, err := NewFetcher(FetchOptions{ProviderOptions: ProviderOptions{Provider: "crawl4ai"}, Filter: "fit_content"}); err == nil {
		t.Error("filter fit_content accepted")
	}
}
