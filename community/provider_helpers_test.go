package community

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// apiRequest is what a fake provider API received.
type apiRequest struct {
	Method, Path, Query string
	Header              http.Header
	Body                map[string]any
}

// fakeAPI serves answer(req) for every request and records the requests.
// answer returns the status and the body to send (JSON unless the header
// it sets says otherwise).
func fakeAPI(t *testing.T, answer func(w http.ResponseWriter, req apiRequest) (int, string)) (*httptest.Server, *[]apiRequest) {
	t.Helper()
	var got []apiRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		req := apiRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone()}
		if len(data) > 0 {
			if err := json.Unmarshal(data, &req.Body); err != nil {
				t.Errorf("request body is not a JSON object: %s", data)
			}
		}
		got = append(got, req)
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		code, body := answer(w, req)
		w.WriteHeader(code)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

// searchJSON runs a web search and returns the tool's text.
func searchJSON(t *testing.T, opts SearchOptions, query string, n int) string {
	t.Helper()
	s, err := NewSearcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Search(t.Context(), query, n)
	text, terr := searchText(t.Context(), query, out, err, "No results found")
	if terr != nil {
		t.Fatal(terr)
	}
	return text
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
