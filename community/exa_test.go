package community

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exaAPI answers in the shapes of Exa's POST /search and /contents.
func exaAPI(t *testing.T) (string, *[]apiRequest) {
	srv, got := fakeAPI(t, func(w http.ResponseWriter, r apiRequest) (int, string) {
		if r.Header.Get("X-Api-Key") != "exa-key" {
			return 401, `{"requestId":"r1","error":"Invalid API key"}`
		}
		switch r.Path {
		case "/search":
			return 200, `{"requestId":"r2","resolvedSearchType":"neural","results":[
{"id":"https://notes.example/deer","title":"Red deer","url":"https://notes.example/deer","publishedDate":"2026-01-02T00:00:00.000Z","highlights":["Stags roar.","Hinds listen."],"highlightScores":[0.4,0.3]},
{"id":"https://notes.example/elk","title":null,"url":"https://notes.example/elk"}],"costDollars":{"total":0.005}}`
		case "/contents":
			if urls, _ := r.Body["urls"].([]any); len(urls) == 1 && urls[0] == "https://gone.example/" {
				return 200, `{"requestId":"r3","results":[],"statuses":[{"id":"https://gone.example/","status":"error","error":{"tag":"CRAWL_NOT_FOUND","httpStatusCode":404}}]}`
			}
			return 200, `{"requestId":"r4","results":[{"id":"https://notes.example/deer","url":"https://notes.example/deer","title":"Red deer","text":"Every autumn, herds move."}]}`
		}
		return 404, `{}`
	})
	return srv.URL, got
}

func TestExaSearch(t *testing.T) {
	base, got := exaAPI(t)
	opts := SearchOptions{ProviderOptions: ProviderOptions{Provider: "exa", BaseURL: base, Getenv: envOf(map[string]string{"EXA_API_KEY": "exa-key"})},
		SearchType: "neural", ContentsMaxCharacters: 300}
	text := searchJSON(t, opts, "red deer", 2)
	want := `{
  "query": "red deer",
  "total_results": 2,
  "results": [
    {
      "title": "Red deer",
      "url": "https://notes.example/deer",
      "content": "Stags roar.\nHinds listen."
    },
    {
      "title": "",
      "url": "https://notes.example/elk",
      "content": ""
    }
  ]
}`
	if d := cmp.Diff(want, text); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	wantBody := map[string]any{"query": "red deer", "type": "neural", "numResults": 2.0,
		"contents": map[string]any{"highlights": map[string]any{"maxCharacters": 300.0}}}
	if d := cmp.Diff(wantBody, (*got)[0].Body); d != "" {
		t.Errorf("request body (-want +got):\n%s", d)
	}

	for name, tc := range map[string]struct{ key, want string }{
		"no key":    {"", `{"error": "EXA_API_KEY is not configured", "query": "red deer"}`},
		"wrong key": {"wrong", `{"error": "Exa API error: HTTP 401", "query": "red deer"}`},
	} {
		t.Run(name, func(t *testing.T) {
			o := opts
			o.APIKey, o.Getenv = tc.key, noEnv
			if got := searchJSON(t, o, "red deer", 2); got != tc.want {
				t.Errorf("got %s", got)
			}
		})
	}
}

func TestExaFetch(t *testing.T) {
	base, got := exaAPI(t)
	opts := &FetchOptions{ProviderOptions: ProviderOptions{Provider: "exa", APIKey: "exa-key", BaseURL: base, Getenv: noEnv}}
	doc, err := fetch(t, opts, "https://notes.example/deer")
	if err != nil || doc != "# Red deer\n\nEvery autumn, herds move." {
		t.Errorf("got %q, %v", doc, err)
	}
	if text, _ := (*got)[0].Body["text"].(map[string]any); text["maxCharacters"] != 4096.0 {
		t.Errorf("text = %v", (*got)[0].Body["text"])
	}
	if _, err := fetch(t, opts, "https://gone.example/"); err == nil || !strings.Contains(err.Error(), "CRAWL_NOT_FOUND") {
		t.Errorf("gone: %v", err)
	}
	if _, err := fetch(t, opts, "http://169.254.169.254/latest/"); err == nil || err.Error() != refused {
		t.Errorf("metadata via exa: %v", err)
	}
	if len(*got) != 2 {
		t.Errorf("exa saw %d requests, want 2 (the refused URL must not reach it)", len(*got))
	}
}
