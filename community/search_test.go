package community

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
)

func noEnv(string) string { return "" }

// ddgServer serves recorded-shape DuckDuckGo pages: the HTML endpoint
// (two result pages) and the image endpoints.
func ddgServer(t *testing.T, requests *atomic.Int32) *httptest.Server {
	t.Helper()
	page1, _ := os.ReadFile("testdata/ddg_page1.html")
	page2, _ := os.ReadFile("testdata/ddg_page2.html")
	none, _ := os.ReadFile("testdata/ddg_noresults.html")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /html/", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("User-Agent") == "" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			t.Errorf("bad headers: %v", r.Header)
		}
		r.ParseForm()
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		switch {
		case r.Form.Get("q") == "rate limited":
			w.WriteHeader(http.StatusAccepted)
		case r.Form.Get("q") == "zzqx":
			w.Write(none)
		case r.Form.Get("s") == "3":
			if r.Form.Get("vqd") == "" || r.Form.Get("kl") != "wt-wt" {
				t.Errorf("next page form lost fields: %v", r.Form)
			}
			w.Write(page2)
		default:
			if r.Form.Get("kl") != "wt-wt" || r.Form.Get("kp") != "-1" {
				t.Errorf("first page form = %v", r.Form)
			}
			w.Write(page1)
		}
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Query().Get("iax") != "images" {
			t.Errorf("token request = %s", r.URL)
		}
		io.WriteString(w, `<html><head><script>DDG.deep.initialize('/d.js?q=red+deer&amp;l=wt-wt&amp;s=0&amp;vqd=4-98765432101234567890',true);</script></head><body></body></html>`)
	})
	mux.HandleFunc("GET /i.js", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		q := r.URL.Query()
		if q.Get("vqd") != "4-98765432101234567890" || q.Get("o") != "json" || r.Header.Get("Referer") == "" {
			t.Errorf("i.js request = %s %v", r.URL, r.Header)
		}
		w.Header().Set("Content-Type", "application/json")
		if q.Get("s") == "100" {
			io.WriteString(w, `{"ads":null,"next":"","query":"red deer","response_type":"images","results":[
{"height":1200,"image":"https://img.example/deer3.jpg","image_token":"c","source":"Bing","thumbnail":"https://tse.example/th?id=3","thumbnail_token":"c3","title":"Hinds at dusk","url":"https://park.example/hinds","width":1600}]}`)
			return
		}
		if got := q.Get("f"); got != "size:Large,color:,type:photo,layout:,license:" {
			t.Errorf("filters = %q", got)
		}
		io.WriteString(w, `{"ads":null,"next":"i.js?q=red+deer&o=json&p=-1&s=100&u=bing&f=,,,,,&l=wt-wt","query":"red deer","queryEncoded":"red%20deer","response_type":"images","results":[
{"height":600,"image":"https://img.example/deer1.jpg","image_token":"a","source":"Bing","thumbnail":"https://tse.example/th?id=1","thumbnail_token":"a1","title":"Red deer stag","url":"https://notes.example/deer","width":800},
{"height":500,"image":"http://169.254.169.254/latest/meta-data/","image_token":"x","source":"Bing","thumbnail":"https://tse.example/th?id=x","thumbnail_token":"x1","title":"Metadata trap","url":"https://evil.example/","width":500},
{"height":700,"image":"https://img.example/deer2.jpg","image_token":"b","source":"Bing","thumbnail":"http://127.0.0.1/thumb.jpg","thumbnail_token":"b1","title":"Herd crossing","url":"https://herds.example/","width":900}],
"vqd":{"red deer":"4-98765432101234567890"}}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestDDGWebSearch(t *testing.T) {
	var requests atomic.Int32
	srv := ddgServer(t, &requests)
	s, err := NewSearcher(SearchOptions{ProviderOptions: ProviderOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Search(t.Context(), "red deer migration", 5)
	if err != nil {
		t.Fatal(err)
	}
	want := &SearchOutput{Query: "red deer migration", TotalResults: 5, Results: []SearchResult{
		{"Red deer - Wikipedia", "https://en.wikipedia.example/wiki/Red_deer", "The red deer is one of the largest deer species. Herds make a seasonal migration between summer and winter ranges."},
		{"The Migration of Antlered Deer & Why It Matters", "https://notes.example/2026/deer/", "Every autumn, herds move from the high pastures down to the valleys."},
		{"鹿の移動 — Park wildlife", "https://park.example/wildlife/deer?lang=de&x=1", "Tracking collars show the oldest animals lead the way."},
		{"Migration corridors", "https://herds.example/corridors", "Fences and roads can break routes."},
		{"The autumn rut", "https://stags.example/rut", "Stags roar to hold their hinds."},
	}}
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("requests = %d, want 2 (two pages)", n)
	}

	requests.Store(0)
	out, err = s.Search(t.Context(), "red deer migration", 2)
	if err != nil || len(out.Results) != 2 || requests.Load() != 1 {
		t.Errorf("max_results 2: %v, %d results, %d requests", err, len(out.Results), requests.Load())
	}
}

func TestWebSearchToolOutput(t *testing.T) {
	var requests atomic.Int32
	srv := ddgServer(t, &requests)
	// The configured max_results wins over the model's argument.
	tl, err := NewWebSearch(SearchOptions{ProviderOptions: ProviderOptions{BaseURL: srv.URL}, MaxResults: 1})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args, want string
	}{
		{"ok", `{"query":"red deer migration","max_results":4}`, `{
  "query": "red deer migration",
  "total_results": 1,
  "results": [
    {
      "title": "Red deer - Wikipedia",
      "url": "https://en.wikipedia.example/wiki/Red_deer",
      "content": "The red deer is one of the largest deer species. Herds make a seasonal migration between summer and winter ranges."
    }
  ]
}`},
		{"empty query", `{"query":"  "}`, `{"error": "query must not be empty", "query": "  "}`},
		{"no results", `{"query":"zzqx"}`, `{"error": "No results found", "query": "zzqx"}`},
		{"rate limited", `{"query":"rate limited"}`, `{"error": "DuckDuckGo returned HTTP 202", "query": "rate limited"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tl.Handler(t.Context(), &tool.Call{}, json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, res.TextContent()); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
		})
	}
}

func TestTavilySearch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/search" {
			t.Errorf("request %s %s", r.Method, r.URL)
		}
		if r.Header.Get("Authorization") != "Bearer tvly-test" {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`)
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		want := map[string]any{"query": "red deer", "max_results": float64(3), "include_domains": []any{"notes.example"}}
		if d := cmp.Diff(want, body); d != "" {
			t.Errorf("body (-want +got):\n%s", d)
		}
		io.WriteString(w, `{"query":"red deer","follow_up_questions":null,"answer":null,"images":[],"results":[
{"url":"https://notes.example/2026/deer/","title":"The Migration of Antlered Deer","content":"Every autumn, herds move.","score":0.91,"raw_content":null},
{"url":"https://notes.example/rut","title":"The rut","content":"Stags roar.","score":0.72,"raw_content":null}],"response_time":0.83}`)
	}))
	defer srv.Close()
	opts := SearchOptions{ProviderOptions: ProviderOptions{Provider: "tavily", APIKey: "tvly-test", BaseURL: srv.URL, Getenv: noEnv},
		IncludeDomains: []string{"notes.example"}}
	s, err := NewSearcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Search(t.Context(), "red deer", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := &SearchOutput{Query: "red deer", TotalResults: 2, Results: []SearchResult{
		{"The Migration of Antlered Deer", "https://notes.example/2026/deer/", "Every autumn, herds move."},
		{"The rut", "https://notes.example/rut", "Stags roar."},
	}}
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}

	for _, tc := range []struct{ key, want string }{
		{"", `{"error": "TAVILY_API_KEY is not configured", "query": "red deer"}`},
		{"wrong", `{"error": "Tavily API error: HTTP 401", "query": "red deer"}`},
	} {
		o := opts
		o.APIKey = tc.key
		tl, err := NewWebSearch(o)
		if err != nil {
			t.Fatal(err)
		}
		res, err := tl.Handler(t.Context(), &tool.Call{}, json.RawMessage(`{"query":"red deer"}`))
		if err != nil || res.TextContent() != tc.want {
			t.Errorf("key %q: %v %q, want %q", tc.key, err, res.TextContent(), tc.want)
		}
	}
	// The key may come from the environment, as in DeerFlow.
	o := opts
	o.APIKey = ""
	o.Getenv = func(k string) string {
		if k == "TAVILY_API_KEY" {
			return "tvly-test"
		}
		return ""
	}
	s, _ = NewSearcher(o)
	if _, err := s.Search(t.Context(), "red deer", 3); err != nil {
		t.Errorf("key from env: %v", err)
	}
}

func searxngServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/search" || q.Get("format") != "json" || q.Get("q") != "red deer" {
			t.Errorf("request %s", r.URL)
		}
		w.Header().Set("Content-Type", "application/json")
		if q.Get("categories") == "images" {
			io.WriteString(w, `{"query":"red deer","number_of_results":0,"results":[
{"url":"https://park.example/hinds","title":"Hinds","content":"","engine":"bing images","img_src":"https://img.example/h.jpg","thumbnail_src":"https://img.example/h_t.jpg","resolution":"800 x 600","category":"images"},
{"url":"https://park.example/x","title":"No image","content":"","engine":"bing images","category":"images"}],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`)
			return
		}
		if q.Get("language") != "en" || q.Get("safesearch") != "2" {
			t.Errorf("params %v", q)
		}
		io.WriteString(w, `{"query":"red deer","number_of_results":0,"results":[
{"url":"https://en.wikipedia.example/wiki/Red_deer","title":"Red deer","content":"One of the largest deer species.","engine":"duckduckgo","parsed_url":["https","en.wikipedia.example","/wiki/Red_deer","","",""],"engines":["duckduckgo","brave"],"positions":[1,1],"score":4.0,"category":"general"},
{"url":"https://notes.example/2026/deer/","title":"Antlered Deer","content":"Herds move in autumn.","engine":"brave","engines":["brave"],"positions":[2],"score":0.5,"category":"general"},
{"url":"https://third.example/","title":"Third","content":"c","engine":"brave","category":"general"}],
"answers":[],"corrections":[],"infoboxes":[],"suggestions":["red deer facts"],"unresponsive_engines":[]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSearXNGSearch(t *testing.T) {
	srv := searxngServer(t)
	s, err := NewSearcher(SearchOptions{ProviderOptions: ProviderOptions{Provider: "searxng", BaseURL: srv.URL + "/"},
		Language: "en", SafeSearch: "strict"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Search(t.Context(), "red deer", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := &SearchOutput{Query: "red deer", TotalResults: 2, Results: []SearchResult{
		{"Red deer", "https://en.wikipedia.example/wiki/Red_deer", "One of the largest deer species."},
		{"Antlered Deer", "https://notes.example/2026/deer/", "Herds move in autumn."},
	}}
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func braveServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "brave-key" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/res/v1/web/search":
			if q.Get("count") != "2" || q.Get("text_decorations") != "false" || q.Get("country") != "GB" {
				t.Errorf("web params %v", q)
			}
			io.WriteString(w, `{"type":"search","query":{"original":"red deer","more_results_available":true},
"web":{"type":"search","family_friendly":true,"results":[
{"title":"Red deer","url":"https://en.wikipedia.example/wiki/Red_deer","is_source_local":false,"description":"The red deer is a large deer.","page_age":"2025-01-01T00:00:00","profile":{"name":"Wikipedia"},"language":"en","family_friendly":true,"type":"search_result"},
{"title":"Deer herds","url":"https://herds.example/","description":"Herds and corridors.","type":"search_result"}]}}`)
		case "/res/v1/images/search":
			io.WriteString(w, `{"type":"images","query":{"original":"red deer","spellcheck_off":false},"results":[
{"type":"image_result","title":"Stag","url":"https://notes.example/stag","source":"notes.example","page_fetched":"2025-05-01T00:00:00Z","thumbnail":{"src":"https://imgs.search.brave.example/t1.jpg","width":500,"height":300},"properties":{"url":"https://img.example/stag.jpg","placeholder":"https://imgs.search.brave.example/p1.jpg","width":1920,"height":1080},"meta_url":{"scheme":"https","netloc":"notes.example"},"confidence":"high"},
{"type":"image_result","title":"Private","url":"https://notes.example/p","source":"notes.example","thumbnail":{"src":"http://10.0.0.5/t.jpg"},"properties":{"url":"http://10.0.0.5/x.png"}},
{"type":"image_result","title":"Thumb only","url":"https://notes.example/t","source":"notes.example","thumbnail":{"src":"https://imgs.search.brave.example/t3.jpg","width":200,"height":100},"properties":{}}]}`)
		default:
			t.Errorf("path %s", r.URL.Path)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBraveSearch(t *testing.T) {
	srv := braveServer(t)
	opts := &SearchOptions{ProviderOptions: ProviderOptions{Provider: "brave", APIKey: "brave-key", BaseURL: srv.URL, Getenv: noEnv}, Country: "GB"}
	s, err := NewSearcher(*opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Search(t.Context(), "red deer", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := &SearchOutput{Query: "red deer", TotalResults: 2, Results: []SearchResult{
		{"Red deer", "https://en.wikipedia.example/wiki/Red_deer", "The red deer is a large deer."},
		{"Deer herds", "https://herds.example/", "Herds and corridors."},
	}}
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	bad := *opts
	bad.APIKey = ""
	tl, _ := NewWebSearch(bad)
	res, _ := tl.Handler(t.Context(), &tool.Call{}, json.RawMessage(`{"query":"red deer"}`))
	if got, want := res.TextContent(), `{"error": "BRAVE_SEARCH_API_KEY is not configured", "query": "red deer"}`; got != want {
		t.Errorf("missing key: %q, want %q", got, want)
	}
	bad.APIKey = "nope"
	tl, _ = NewWebSearch(bad)
	res, _ = tl.Handler(t.Context(), &tool.Call{}, json.RawMessage(`{"query":"red deer"}`))
	if got, want := res.TextContent(), `{"error": "Brave Search API error: HTTP 401", "query": "red deer"}`; got != want {
		t.Errorf("bad key: %q, want %q", got, want)
	}
}

func TestImageSearchProviders(t *testing.T) {
	var requests atomic.Int32
	ddgSrv := ddgServer(t, &requests)
	braveSrv := braveServer(t)
	sxSrv := searxngServer(t)
	tests := []struct {
		name string
		opts SearchOptions
		q    ImageQuery
		want []ImageResult
	}{
		{"ddg", SearchOptions{ProviderOptions: ProviderOptions{BaseURL: ddgSrv.URL}},
			ImageQuery{Query: "red deer", MaxResults: 3, Size: "Large", Type: "photo"},
			[]ImageResult{
				{Title: "Red deer stag", ImageURL: "https://img.example/deer1.jpg", ThumbnailURL: "https://tse.example/th?id=1", SourceURL: "https://notes.example/deer", Width: 800, Height: 600},
				// The metadata-address image is dropped; a loopback thumbnail is blanked.
				{Title: "Herd crossing", ImageURL: "https://img.example/deer2.jpg", ThumbnailURL: "", SourceURL: "https://herds.example/", Width: 900, Height: 700},
				{Title: "Hinds at dusk", ImageURL: "https://img.example/deer3.jpg", ThumbnailURL: "https://tse.example/th?id=3", SourceURL: "https://park.example/hinds", Width: 1600, Height: 1200},
			}},
		{"brave", SearchOptions{ProviderOptions: ProviderOptions{Provider: "brave", APIKey: "brave-key", BaseURL: braveSrv.URL, Getenv: noEnv}},
			ImageQuery{Query: "red deer", MaxResults: 5},
			[]ImageResult{
				{Title: "Stag", ImageURL: "https://img.example/stag.jpg", ThumbnailURL: "https://imgs.search.brave.example/t1.jpg", SourceURL: "https://notes.example/stag", Width: 1920, Height: 1080},
				{Title: "Thumb only", ImageURL: "https://imgs.search.brave.example/t3.jpg", ThumbnailURL: "https://imgs.search.brave.example/t3.jpg", SourceURL: "https://notes.example/t", Width: 200, Height: 100},
			}},
		{"searxng", SearchOptions{ProviderOptions: ProviderOptions{Provider: "searxng", BaseURL: sxSrv.URL}},
			ImageQuery{Query: "red deer", MaxResults: 5},
			[]ImageResult{{Title: "Hinds", ImageURL: "https://img.example/h.jpg", ThumbnailURL: "https://img.example/h_t.jpg", SourceURL: "https://park.example/hinds"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewImageSearcher(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			out, err := s.Search(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			want := &ImageSearchOutput{Query: tt.q.Query, TotalResults: len(tt.want), Results: tt.want, UsageHint: imageUsageHint}
			if d := cmp.Diff(want, out); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestImageSearchTool(t *testing.T) {
	var requests atomic.Int32
	srv := ddgServer(t, &requests)
	tl, err := NewImageSearch(SearchOptions{ProviderOptions: ProviderOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Handler(t.Context(), &tool.Call{}, json.RawMessage(`{"query":"red deer","max_results":1,"size":"Large","type_image":"photo"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out ImageSearchOutput
	if err := json.Unmarshal([]byte(res.TextContent()), &out); err != nil {
		t.Fatalf("%v: %s", err, res.TextContent())
	}
	if out.TotalResults != 1 || out.Results[0].ImageURL != "https://img.example/deer1.jpg" || out.UsageHint == "" {
		t.Errorf("output = %+v", out)
	}
	if !strings.Contains(res.TextContent(), "\n  \"query\": \"red deer\",") {
		t.Errorf("output is not indented JSON: %s", res.TextContent())
	}
	if _, err := NewImageSearcher(SearchOptions{ProviderOptions: ProviderOptions{Provider: "tavily"}}); err == nil {
		t.Error("tavily image search: want a configuration error")
	}
}

func TestDDGUnwrap(t *testing.T) {
	tests := map[string]string{
		"//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2Fp%3Fx%3D1&rut=z": "https://a.example/p?x=1",
		"https://b.example/":                      "https://b.example/",
		"https://duckduckgo.com/y.js?ad_domain=x": "",
		"javascript:alert(1)":                     "",
		"/relative":                               "",
		"https://duckduckgo.com/l/?kh=-1&uddg=http%3A%2F%2Fc.example": "http://c.example",
	}
	for in, want := range tests {
		if got := ddgUnwrap(in); got != want {
			t.Errorf("ddgUnwrap(%q) = %q, want %q", in, got, want)
		}
	}
}
