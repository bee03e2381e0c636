package community

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// infoquestAPI answers in the shapes of InfoQuest's search endpoint (web
// and image search) and its reader.
func infoquestAPI(t *testing.T) (string, *[]apiRequest) {
	srv, got := fakeAPI(t, func(w http.ResponseWriter, r apiRequest) (int, string) {
		if r.Header.Get("Authorization") != "Bearer iq-key" {
			return 401, `{"error":"unauthorized"}`
		}
		switch {
		case r.Path == "/reader" && r.Body["url"] == "https://plain.example/":
			w.Header().Set("Content-Type", "text/html")
			return 200, `<html><head><title>Plain</title></head><body><p>Raw body text.</p></body></html>`
		case r.Path == "/reader":
			return 200, `{"reader_result":"<html><head><title>Red deer</title></head><body><article><h1>Red deer</h1><p>Every autumn, herds of red deer move down from the hills.</p></article></body></html>"}`
		case r.Body["search_type"] == "Images":
			return 200, `{"search_result":{"results":[{"content":{"results":{"images_results":[
{"original":"https://img.example/stag.jpg","title":"Stag"},{"original":"https://img.example/stag.jpg","title":"Again"},{"original":"http://10.0.0.1/x.jpg","title":"Private"}]}}}]}}`
		case r.Body["query"] == "broken":
			return 200, `{"content":"quota exceeded"}`
		}
		return 200, `{"search_result":{"results":[{"content":{"results":{
"organic":[{"title":"Red deer","desc":"Stags roar.","url":"https://notes.example/deer"},{"title":"Dup","desc":"x","url":"https://notes.example/deer"}],
"top_stories":{"items":[{"title":"Rut begins","url":"https://news.example/rut","source":"Daily","time_frame":"2 hours ago"}]}}}}]}}`
	})
	return srv.URL, got
}

func TestInfoQuestSearch(t *testing.T) {
	base, got := infoquestAPI(t)
	env := envOf(map[string]string{"INFOQUEST_API_KEY": "iq-key"})
	opts := SearchOptions{ProviderOptions: ProviderOptions{Provider: "infoquest", BaseURL: base, Getenv: env}, SearchTimeRange: 10}
	s, err := NewSearcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Search(t.Context(), "red deer", 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchResult{{"Red deer", "https://notes.example/deer", "Stags roar."}, {"Rut begins", "https://news.example/rut", "Daily 2 hours ago"}}
	if d := cmp.Diff(want, out.Results); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"query": "red deer", "format": "JSON", "time_range": 10.0}, (*got)[0].Body); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
	if got := searchJSON(t, opts, "broken", 5); got != `{"error": "InfoQuest web search API returned the wrong format (no search_result)", "query": "broken"}` {
		t.Errorf("wrong format: %s", got)
	}
}

func TestInfoQuestImages(t *testing.T) {
	base, got := infoquestAPI(t)
	opts := SearchOptions{ProviderOptions: ProviderOptions{Provider: "infoquest", APIKey: "iq-key", BaseURL: base, Getenv: noEnv}, ImageSearchTimeRange: 30}
	s, err := NewImageSearcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Search(t.Context(), ImageQuery{Query: "stag"})
	if err != nil {
		t.Fatal(err)
	}
	want := []ImageResult{{Title: "Stag", ImageURL: "https://img.example/stag.jpg", ThumbnailURL: "https://img.example/stag.jpg"}}
	if d := cmp.Diff(want, out.Results); d != "" {
		t.Errorf("deduplicated, private dropped (-want +got):\n%s", d)
	}
	wantBody := map[string]any{"query": "stag", "format": "JSON", "search_type": "Images", "image_size": "i", "time_range": 30.0}
	if d := cmp.Diff(wantBody, (*got)[0].Body); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
	if _, err := NewImageSearcher(SearchOptions{ProviderOptions: ProviderOptions{Provider: "infoquest"}, ImageSize: "xl"}); err == nil {
		t.Error("image_size xl accepted")
	}
}

func TestInfoQuestFetch(t *testing.T) {
	base, got := infoquestAPI(t)
	opts := &FetchOptions{ProviderOptions: ProviderOptions{Provider: "infoquest", BaseURL: base + "/reader", Timeout: 10, Getenv: envOf(map[string]string{"INFOQUEST_API_KEY": "iq-key"})},
		FetchTime: 5, NavigationTimeout: -1}
	doc, err := fetch(t, opts, "https://notes.example/deer")
	if err != nil || doc != "# Red deer\n\nEvery autumn, herds of red deer move down from the hills." {
		t.Errorf("fetch = %q, %v", doc, err)
	}
	wantBody := map[string]any{"url": "https://notes.example/deer", "format": "HTML", "fetch_time": 5.0, "timeout": 10.0}
	if d := cmp.Diff(wantBody, (*got)[0].Body); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
	doc, err = fetch(t, opts, "https://plain.example/")
	if err != nil || doc != "# Plain\n\nRaw body text." {
		t.Errorf("non-JSON reader answer = %q, %v", doc, err)
	}
}
