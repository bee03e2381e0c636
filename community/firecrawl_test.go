package community

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// firecrawlAPI answers in the shapes of Firecrawl's v2 /search and
// /scrape (fastCRW serves the same), checking the bearer key when key is
// not "".
func firecrawlAPI(t *testing.T, key string) (string, *[]apiRequest) {
	srv, got := fakeAPI(t, func(w http.ResponseWriter, r apiRequest) (int, string) {
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			return 401, `{"success":false,"error":"Unauthorized: Invalid token"}`
		}
		switch r.Path {
		case "/v2/search":
			return 200, `{"success":true,"data":{"web":[{"url":"https://notes.example/deer","title":"Red deer","description":"Stags roar.","position":1}]},"creditsUsed":2}`
		case "/v2/scrape":
			if r.Body["url"] == "https://empty.example/" {
				return 200, `{"success":true,"data":{"markdown":"","metadata":{"statusCode":200}}}`
			}
			return 200, `{"success":true,"data":{"markdown":"Every autumn, herds move.","metadata":{"title":"Red deer","sourceURL":"https://notes.example/deer","statusCode":200}}}`
		}
		return 404, `{"success":false,"error":"not found"}`
	})
	return srv.URL, got
}

func TestFirecrawlSearchAndFetch(t *testing.T) {
	base, got := firecrawlAPI(t, "fc-key")
	env := envOf(map[string]string{"FIRECRAWL_API_KEY": "fc-key"})
	sopts := SearchOptions{ProviderOptions: ProviderOptions{Provider: "firecrawl", BaseURL: base, Getenv: env}}
	s, err := NewSearcher(sopts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Search(t.Context(), "red deer", 4)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]SearchResult{{"Red deer", "https://notes.example/deer", "Stags roar."}}, out.Results); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"query": "red deer", "limit": 4.0}, (*got)[0].Body); d != "" {
		t.Errorf("search body (-want +got):\n%s", d)
	}
	fopts := &FetchOptions{ProviderOptions: ProviderOptions{Provider: "firecrawl", BaseURL: base, Getenv: env}}
	doc, err := fetch(t, fopts, "https://notes.example/deer")
	if err != nil || doc != "# Red deer\n\nEvery autumn, herds move." {
		t.Errorf("fetch = %q, %v", doc, err)
	}
	if _, err := fetch(t, fopts, "https://empty.example/"); err == nil || err.Error() != "No content found" {
		t.Errorf("empty: %v", err)
	}
	nokey := *fopts
	nokey.Getenv = noEnv
	if _, err := fetch(t, &nokey, "https://notes.example/deer"); err == nil || err.Error() != "FIRECRAWL_API_KEY is not configured" {
		t.Errorf("no key: %v", err)
	}
	if got := searchJSON(t, SearchOptions{ProviderOptions: ProviderOptions{Provider: "firecrawl", APIKey: "bad", BaseURL: base, Getenv: noEnv}}, "x", 1); got != `{"error": "Firecrawl API error: HTTP 401", "query": "x"}` {
		t.Errorf("bad key: %s", got)
	}
}

// TestFastCRWFetch checks fastCRW's key and base from CRW_API_KEY and
// CRW_API_URL, that a self-hosted server needs no key, and that the
// target host is resolved and screened before the request.
func TestFastCRWFetch(t *testing.T) {
	base, got := firecrawlAPI(t, "crw-key")
	env := envOf(map[string]string{"CRW_API_KEY": "crw-key", "CRW_API_URL": base})
	opts := &FetchOptions{ProviderOptions: ProviderOptions{Provider: "fastcrw", Getenv: env},
		Resolver: fakeResolver{"notes.example": {publicIP}, "rebind.test": {"10.0.0.7"}}}
	doc, err := fetch(t, opts, "https://notes.example/deer")
	if err != nil || doc != "# Red deer\n\nEvery autumn, herds move." {
		t.Errorf("fetch = %q, %v", doc, err)
	}
	if _, err := fetch(t, opts, "https://rebind.test/"); err == nil || err.Error() != refused {
		t.Errorf("host resolving to a private address: %v", err)
	}
	if len(*got) != 1 {
		t.Errorf("fastCRW saw %d requests, want 1", len(*got))
	}

	selfHosted, _ := firecrawlAPI(t, "")
	s := searchJSON(t, SearchOptions{ProviderOptions: ProviderOptions{Provider: "fastcrw", BaseURL: selfHosted, Getenv: noEnv}}, "red deer", 2)
	if want := `"url": "https://notes.example/deer"`; !strings.Contains(s, want) {
		t.Errorf("keyless self-hosted search = %s", s)
	}
}
