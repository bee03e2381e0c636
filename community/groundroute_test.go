package community

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// groundrouteAPI answers in the shape of GroundRoute's POST /v1/search,
// for a search and for mode=page.
func groundrouteAPI(t *testing.T) (string, *[]apiRequest) {
	srv, got := fakeAPI(t, func(w http.ResponseWriter, r apiRequest) (int, string) {
		if r.Path != "/v1/search" {
			return 404, `{}`
		}
		if r.Header.Get("Authorization") != "Bearer gr-key" {
			return 401, `{"detail":"invalid key"}`
		}
		if r.Body["mode"] == "page" {
			return 200, `{"results":[{"url":"https://notes.example/deer","title":"Red deer","snippet":"Stags.","content":"Every autumn, herds move.","source_engine":"firecrawl"}]}`
		}
		return 200, `{"engine":"brave","cached":false,"results":[
{"url":"https://notes.example/deer","title":"Red deer","snippet":"Stags roar.","content":"long text","source_engine":"brave","published_at":null},
{"url":"https://notes.example/elk","title":"Elk","snippet":"","content":"Wapiti.","source_engine":"brave"}]}`
	})
	return srv.URL, got
}

func TestGroundRouteSearchAndFetch(t *testing.T) {
	base, got := groundrouteAPI(t)
	env := envOf(map[string]string{"GROUNDROUTE_API_KEY": "gr-key"})
	s, err := NewSearcher(SearchOptions{ProviderOptions: ProviderOptions{Provider: "groundroute", BaseURL: base, Getenv: env}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Search(t.Context(), "red deer", 80)
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchResult{{"Red deer", "https://notes.example/deer", "Stags roar."}, {"Elk", "https://notes.example/elk", "Wapiti."}}
	if d := cmp.Diff(want, out.Results); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"query": "red deer", "max_results": 50.0}, (*got)[0].Body); d != "" {
		t.Errorf("body, clamped to 50 (-want +got):\n%s", d)
	}
	opts := &FetchOptions{ProviderOptions: ProviderOptions{Provider: "groundroute", BaseURL: base, Getenv: env}}
	doc, err := fetch(t, opts, "https://notes.example/deer")
	if err != nil || doc != "# Red deer\n\nEvery autumn, herds move." {
		t.Errorf("fetch = %q, %v", doc, err)
	}
	if d := cmp.Diff(map[string]any{"query": "https://notes.example/deer", "mode": "page", "max_results": 1.0}, (*got)[1].Body); d != "" {
		t.Errorf("fetch body (-want +got):\n%s", d)
	}
	nokey := *opts
	nokey.Getenv = noEnv
	if _, err := fetch(t, &nokey, "https://notes.example/deer"); err == nil || err.Error() != "GROUNDROUTE_API_KEY is not configured" {
		t.Errorf("no key: %v", err)
	}
}
