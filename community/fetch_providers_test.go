package community

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// jinaServer is a recorded-shape Jina reader: POST {"url": ...} with
// X-Return-Format: html returns the page's HTML.
func jinaServer(t *testing.T) *httptest.Server {
	article, err := os.ReadFile("testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			URL string `json:"url"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if r.Method != http.MethodPost || r.Header.Get("X-Return-Format") != "html" ||
			r.Header.Get("X-Timeout") != "7" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("jina request: %s %v", r.Method, r.Header)
		}
		switch {
		case r.Header.Get("Authorization") != "Bearer jina-key":
			w.WriteHeader(http.StatusPaymentRequired)
			io.WriteString(w, `{"data":null,"code":402,"name":"InsufficientBalanceError","status":40203,"message":"Account balance not enough"}`)
		case body.URL == "https://blank.example/":
			w.WriteHeader(http.StatusOK)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(article)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestJinaFetch(t *testing.T) {
	srv := jinaServer(t)
	opts := &FetchOptions{ProviderOptions: ProviderOptions{Provider: "jina", APIKey: "jina-key", BaseURL: srv.URL, Timeout: 7, Getenv: noEnv}}
	got, err := fetch(t, opts, "https://notes.example/2026/deer/")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "# The Migration of Antlered Deer\n\n") ||
		!strings.Contains(got, "[snowfall study](https://notes.example/studies/snowfall)") {
		t.Errorf("document = %.300s", got)
	}
	if _, err := fetch(t, opts, "https://blank.example/"); err == nil || err.Error() != "Jina API returned empty response" {
		t.Errorf("empty: %v", err)
	}
	bad := *opts
	bad.APIKey = ""
	_, err = fetch(t, &bad, "https://notes.example/")
	if err == nil || !strings.HasPrefix(err.Error(), "Jina API returned status 402: {\"data\":null") {
		t.Errorf("402: %v", err)
	}
	// Even through a third party, the URL is screened unless opted out.
	if _, err := fetch(t, opts, "http://169.254.169.254/"); err == nil || err.Error() != refused {
		t.Errorf("metadata via jina: %v", err)
	}
}

func TestTavilyFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/extract" || r.Header.Get("Authorization") != "Bearer tvly-test" {
			t.Errorf("request %s %v", r.URL, r.Header)
		}
		var body struct {
			URLs []string `json:"urls"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if len(body.URLs) == 1 && body.URLs[0] == "https://fail.example/" {
			io.WriteString(w, `{"results":[],"failed_results":[{"url":"https://fail.example/","error":"Failed to fetch url"}],"response_time":0.1}`)
			return
		}
		io.WriteString(w, `{"results":[{"url":"https://notes.example/2026/deer/","raw_content":"Every autumn, herds of red deer move.","images":[]}],"failed_results":[],"response_time":0.4}`)
	}))
	defer srv.Close()
	opts := &FetchOptions{ProviderOptions: ProviderOptions{Provider: "tavily", APIKey: "tvly-test", BaseURL: srv.URL, Getenv: noEnv}}
	got, err := fetch(t, opts, "https://notes.example/2026/deer/")
	if err != nil || got != "# https://notes.example/2026/deer/\n\nEvery autumn, herds of red deer move." {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := fetch(t, opts, "https://fail.example/"); err == nil || err.Error() != "Failed to fetch url" {
		t.Errorf("failed result: %v", err)
	}
}
