package community

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// serperAPI answers in the shapes of Serper's POST /search and /images.
func serperAPI(t *testing.T) (string, *[]apiRequest) {
	srv, got := fakeAPI(t, func(w http.ResponseWriter, r apiRequest) (int, string) {
		if r.Header.Get("X-Api-Key") != "serper-key" {
			return 403, `{"message":"Unauthorized.","statusCode":403}`
		}
		switch {
		case r.Body["q"] == "nothing":
			return 200, `{"searchParameters":{"q":"nothing"},"organic":null}`
		case r.Body["q"] == "odd":
			return 200, `{"organic":{"title":"not a list"}}`
		case r.Path == "/search":
			return 200, `{"searchParameters":{"q":"red deer","type":"search","engine":"google"},"organic":[
{"title":"Red deer - Wikipedia","link":"https://en.wikipedia.org/wiki/Red_deer","snippet":"The red deer is one of the largest deer species.","position":1},
{"title":"Rut","link":"https://notes.example/rut","snippet":"Stags roar.","position":2}],"credits":1}`
		case r.Path == "/images":
			return 200, `{"searchParameters":{"q":"red deer","type":"images"},"images":[
{"title":"Stag","imageUrl":"https://img.example/stag.jpg","imageWidth":1200,"imageHeight":800,"thumbnailUrl":"https://tbn.example/stag","source":"Wikipedia","link":"https://en.wikipedia.org/wiki/Red_deer","position":1},
{"title":"Local","imageUrl":"http://127.0.0.1/secret.png","thumbnailUrl":"https://tbn.example/local","link":"https://notes.example/","position":2},
{"title":"Thumb only","thumbnailUrl":"https://tbn.example/only","link":"https://notes.example/t","position":3}]}`
		}
		return 404, `{}`
	})
	return srv.URL, got
}

func TestSerperSearch(t *testing.T) {
	base, got := serperAPI(t)
	opts := SearchOptions{ProviderOptions: ProviderOptions{Provider: "serper", BaseURL: base, Getenv: envOf(map[string]string{"SERPER_API_KEY": "serper-key"})}}
	s, err := NewSearcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Search(t.Context(), "red deer", 50)
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchResult{
		{"Red deer - Wikipedia", "https://en.wikipedia.org/wiki/Red_deer", "The red deer is one of the largest deer species."},
		{"Rut", "https://notes.example/rut", "Stags roar."},
	}
	if d := cmp.Diff(want, out.Results); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"q": "red deer", "num": 10.0}, (*got)[0].Body); d != "" {
		t.Errorf("body, num capped at 10 (-want +got):\n%s", d)
	}
	long := strings.Repeat("q", 600)
	searchJSON(t, opts, long, 1)
	if q, _ := (*got)[1].Body["q"].(string); len(q) != 500 {
		t.Errorf("query sent has %d characters, want 500", len(q))
	}
	for name, tc := range map[string]struct{ query, key, want string }{
		"null organic": {"nothing", "serper-key", `{"error": "No results found", "query": "nothing"}`},
		"odd shape":    {"odd", "serper-key", `{"error": "Serper returned an unexpected response format", "query": "odd"}`},
		"no key":       {"red deer", "", `{"error": "SERPER_API_KEY is not configured", "query": "red deer"}`},
		"wrong key":    {"red deer", "nope", `{"error": "Serper API error: HTTP 403", "query": "red deer"}`},
	} {
		t.Run(name, func(t *testing.T) {
			o := opts
			o.APIKey, o.Getenv = tc.key, noEnv
			if got := searchJSON(t, o, tc.query, 3); got != tc.want {
				t.Errorf("got %s", got)
			}
		})
	}
}

func TestSerperImages(t *testing.T) {
	base, _ := serperAPI(t)
	opts := SearchOptions{ProviderOptions: ProviderOptions{Provider: "serper", APIKey: "serper-key", BaseURL: base, Getenv: noEnv}}
	s, err := NewImageSearcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Search(t.Context(), ImageQuery{Query: "red deer"})
	if err != nil {
		t.Fatal(err)
	}
	want := []ImageResult{
		{Title: "Stag", ImageURL: "https://img.example/stag.jpg", ThumbnailURL: "https://tbn.example/stag",
			SourceURL: "https://en.wikipedia.org/wiki/Red_deer", Width: 1200, Height: 800},
		{Title: "Thumb only", ImageURL: "https://tbn.example/only", ThumbnailURL: "https://tbn.example/only", SourceURL: "https://notes.example/t"},
	}
	if d := cmp.Diff(want, out.Results); d != "" {
		t.Errorf("loopback image dropped, thumbnail-only kept (-want +got):\n%s", d)
	}
}
