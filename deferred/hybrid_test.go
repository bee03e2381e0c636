package deferred

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
)

// conceptAxes is the fake model's meaning: each word maps to an axis, so
// texts sharing no word can still be near (rain and forecast).
var conceptAxes = map[string]int{
	"weather": 0, "forecast": 0, "rain": 0, "temperature": 0, "umbrella": 0,
	"issue": 1, "bug": 1, "ticket": 1, "defect": 1,
	"message": 2, "chat": 2, "slack": 2, "post": 2,
	"file": 3, "disk": 3, "read": 3,
	"xyzzy": 5, "plugh": 5, // no tool's concept
}

// fakeVector embeds text as counts over conceptAxes, plus a small
// constant so no vector is zero (axis 4).
func fakeVector(text string) []float32 {
	v := make([]float32, 6)
	v[4] = 0.01
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if a, ok := conceptAxes[w]; ok {
			v[a]++
		}
	}
	return v
}

// fakeEmbeddings is an OpenAI-compatible /v1/embeddings on 127.0.0.1.
type fakeEmbeddings struct {
	srv        *httptest.Server
	batches    atomic.Int32  // requests of catalogue texts (name, newline, description)
	docTexts   atomic.Int32  // catalogue texts embedded
	queries    atomic.Int32  // requests of one query
	queryDelay atomic.Int64  // nanoseconds a query request waits
	fail       atomic.Bool   // answer 500
	block      chan struct{} // when set, batch requests wait on it or their context
	mu         sync.Mutex
	authHeader string
}

func newFakeEmbeddings(t *testing.T) *fakeEmbeddings {
	f := &fakeEmbeddings{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		f.mu.Lock()
		f.authHeader = r.Header.Get("Authorization")
		f.mu.Unlock()
		var in struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Model != "fake-embed" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if len(in.Input) == 1 && !strings.Contains(in.Input[0], "\n") {
			f.queries.Add(1)
			select {
			case <-time.After(time.Duration(f.queryDelay.Load())):
			case <-r.Context().Done():
				return
			}
		} else {
			f.batches.Add(1)
			f.docTexts.Add(int32(len(in.Input)))
			if f.block != nil {
				select {
				case <-f.block:
				case <-r.Context().Done():
					return
				}
			}
		}
		if f.fail.Load() {
			http.Error(w, "model overloaded", http.StatusInternalServerError)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i := len(in.Input) - 1; i >= 0; i-- { // out of order: the client places by index
			out.Data = append(out.Data, item{i, fakeVector(in.Input[i])})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEmbeddings) client() *EmbeddingsClient {
	return &EmbeddingsClient{BaseURL: f.srv.URL + "/v1", Model: "fake-embed", APIKey: "sk-test"}
}

func hybridTools() []*tool.Tool {
	return []*tool.Tool{
		fakeTool("wx", "wx_get_forecast", "Daily temperature outlook for a city.", nil),
		fakeTool("gh", "gh_create_issue", "Open a ticket in a repository.", nil),
		fakeTool("sl", "sl_post", "Post a message to a channel.", nil),
		fakeTool("fs", "fs_read", "Read a file from disk.", nil),
		fakeTool("gh", "gh_list_repos", "List the repositories of an organisation.", nil),
	}
}

func toolNames(ts []*tool.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// hybridCatalog builds the hybrid tools' catalogue through a cache with
// hybrid search over f and waits for its vectors.
func hybridCatalog(t *testing.T, o HybridOptions) (*Catalog, *Hybrid) {
	t.Helper()
	h := NewHybrid(o)
	t.Cleanup(func() { _ = h.Close() })
	c := NewCatalogCache(CatalogCacheOptions{Hybrid: h}).Catalog(hybridTools())
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	h.Wait(ctx, c)
	return c, h
}

func TestHybridSearch_fusesDenseAndLexicalRanks(t *testing.T) {
	f := newFakeEmbeddings(t)
	c, h := hybridCatalog(t, HybridOptions{Embedder: f.client()})
	if !h.Wait(t.Context(), c) {
		t.Fatal("the catalogue has no vectors")
	}
	f.mu.Lock()
	if f.authHeader != "Bearer sk-test" {
		t.Errorf("Authorization = %q", f.authHeader)
	}
	f.mu.Unlock()
	tests := []struct {
		query   string
		lexical []string // Search, for contrast
		hybrid  []string
	}{
		// No word in common with the forecast tool: only its meaning finds it.
		{"will it rain tomorrow", nil, []string{"wx_get_forecast"}},
		{"bring an umbrella?", nil, []string{"wx_get_forecast"}},
		// Both rankings agree.
		{"read a file from disk", []string{"fs_read"}, []string{"fs_read"}},
	}
	for _, tt := range tests {
		if got := toolNames(c.Search(tt.query, 1)); !cmp.Equal(got, tt.lexical) {
			t.Errorf("lexical %q = %v, want %v", tt.query, got, tt.lexical)
		}
		got := toolNames(c.SearchContext(t.Context(), tt.query, 1))
		if diff := cmp.Diff(tt.hybrid, got); diff != "" {
			t.Errorf("hybrid %q (-want +got):\n%s", tt.query, diff)
		}
	}
	// select: and + stay exact.
	if got := toolNames(c.SearchContext(t.Context(), "select:fs_read", 5)); !cmp.Equal(got, []string{"fs_read"}) {
		t.Errorf("select: = %v", got)
	}
	res := c.searchResult(t.Context(), "will it rain tomorrow", 1)
	if res.Update == nil || !cmp.Equal(res.Update.Promoted.Names, []string{"wx_get_forecast"}) {
		t.Errorf("tool_search promotion = %+v", res.Update)
	}
}

// TestHybridSearch_similarityFloor checks MinSimilarity: without it the
// dense ranking fills the results of a query that means nothing to the
// model; with it such a query finds only what its words find.
func TestHybridSearch_similarityFloor(t *testing.T) {
	f := newFakeEmbeddings(t)
	tests := []struct {
		name  string
		floor float64
		query string
		want  []string
	}{
		{"no floor: the nearest tools of nothing", 0, "xyzzy plugh", []string{"gh_list_repos", "wx_get_forecast"}},
		{"a floor: nothing", 0.5, "xyzzy plugh", nil},
		{"a floor keeps what is near", 0.5, "will it rain tomorrow", []string{"wx_get_forecast"}},
		{"a floor keeps the words' matches", 0.5, "list the repositories", []string{"gh_list_repos", "gh_create_issue"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, h := hybridCatalog(t, HybridOptions{Embedder: f.client(), MinSimilarity: tt.floor})
			if !h.Wait(t.Context(), c) {
				t.Fatal("the catalogue has no vectors")
			}
			got := toolNames(c.SearchContext(t.Context(), tt.query, 2))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SearchContext(%q) (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestFuseRanks(t *testing.T) {
	tests := []struct {
		name           string
		lexical, dense []int
		want           []int
	}{
		{"both agree", []int{1, 2, 3}, []int{1, 2, 3}, []int{1, 2, 3}},
		{"in both beats first in one", []int{7, 2}, []int{2, 9}, []int{2, 7, 9}},
		{"ties keep the lexical order", []int{4}, []int{5}, []int{4, 5}},
		{"one list empty", nil, []int{3, 1}, []int{3, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, fuseRanks(tt.lexical, tt.dense)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestHybridSearch_cachedVectorsAreNotEmbeddedAgain(t *testing.T) {
	f := newFakeEmbeddings(t)
	dir := t.TempDir()
	c, _ := hybridCatalog(t, HybridOptions{Embedder: f.client(), CacheDir: dir, BatchSize: 2})
	if n, texts := f.batches.Load(), f.docTexts.Load(); n != 3 || texts != 5 {
		t.Errorf("five tools in batches of two took %d requests of %d texts, want 3 of 5", n, texts)
	}
	first := toolNames(c.SearchContext(t.Context(), "will it rain", 3))

	// A second process: a new Hybrid and cache over the same folder.
	c2, h2 := hybridCatalog(t, HybridOptions{Embedder: f.client(), CacheDir: dir, BatchSize: 2})
	if !h2.Wait(t.Context(), c2) {
		t.Fatal("no vectors from the cache")
	}
	if n := f.docTexts.Load(); n != 5 {
		t.Errorf("the cached catalogue was embedded again: %d texts in all", n)
	}
	if got := toolNames(c2.SearchContext(t.Context(), "will it rain", 3)); !cmp.Equal(got, first) {
		t.Errorf("from the cache %v, embedded %v", got, first)
	}

	files, _ := filepath.Glob(filepath.Join(dir, "*.vec"))
	if len(files) != 1 {
		t.Fatalf("vector files %v, want one", files)
	}
	// A corrupt file is embedded again, not trusted.
	if err := os.WriteFile(files[0], []byte("ANTLVEC1garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	hybridCatalog(t, HybridOptions{Embedder: f.client(), CacheDir: dir, BatchSize: 2})
	if n := f.docTexts.Load(); n != 10 {
		t.Errorf("after corrupting the cache: %d texts embedded in all, want 10", n)
	}
}

func TestHybridSearch_fallsBackToLexical(t *testing.T) {
	t.Run("query over the timeout", func(t *testing.T) {
		f := newFakeEmbeddings(t)
		var logs bytes.Buffer
		c, _ := hybridCatalog(t, HybridOptions{Embedder: f.client(), QueryTimeout: 20 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		f.queryDelay.Store(int64(5 * time.Second))
		got := toolNames(c.SearchContext(t.Context(), "post a message", 3))
		if want := toolNames(c.Search("post a message", 3)); !cmp.Equal(got, want) {
			t.Errorf("timed-out query = %v, want the lexical %v", got, want)
		}
		if !strings.Contains(logs.String(), "lexical ranking only") {
			t.Errorf("no warning logged: %s", logs.String())
		}
	})
	t.Run("endpoint failing at build", func(t *testing.T) {
		f := newFakeEmbeddings(t)
		f.fail.Store(true)
		var logs bytes.Buffer
		c, h := hybridCatalog(t, HybridOptions{Embedder: f.client(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if h.Wait(t.Context(), c) {
			t.Fatal("vectors from a failing endpoint")
		}
		if got, want := toolNames(c.SearchContext(t.Context(), "read a file", 3)), toolNames(c.Search("read a file", 3)); !cmp.Equal(got, want) {
			t.Errorf("search = %v, want the lexical %v", got, want)
		}
		if f.queries.Load() != 0 {
			t.Error("a query was embedded for a catalogue without vectors")
		}
		if !strings.Contains(logs.String(), "model overloaded") {
			t.Errorf("the failure is not logged: %s", logs.String())
		}
	})
	t.Run("catalogue over MaxTools", func(t *testing.T) {
		f := newFakeEmbeddings(t)
		c, h := hybridCatalog(t, HybridOptions{Embedder: f.client(), MaxTools: 3})
		if h.Wait(t.Context(), c) || f.batches.Load() != 0 {
			t.Errorf("a catalogue over MaxTools was embedded (%d requests)", f.batches.Load())
		}
	})
}

func TestHybrid_closeStopsABuild(t *testing.T) {
	f := newFakeEmbeddings(t)
	f.block = make(chan struct{}) // never released: the build waits for Close
	h := NewHybrid(HybridOptions{Embedder: f.client()})
	c := NewCatalogCache(CatalogCacheOptions{Hybrid: h}).Catalog(hybridTools())
	for f.batches.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { _ = h.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not stop the build")
	}
	if h.Wait(t.Context(), c) {
		t.Error("a cancelled build left vectors")
	}
	// A catalogue built after Close stays lexical and starts nothing.
	c2 := NewCatalogCache(CatalogCacheOptions{Hybrid: h}).Catalog(hybridTools()[:2])
	if h.Wait(t.Context(), c2) {
		t.Error("vectors after Close")
	}
}

// TestHybrid_boundsPendingBuilds: while one build waits on a stuck
// endpoint, at most maxPendingBuilds catalogues wait in all; one more
// stays lexical at once instead of queueing.
func TestHybrid_boundsPendingBuilds(t *testing.T) {
	f := newFakeEmbeddings(t)
	f.block = make(chan struct{})
	h := NewHybrid(HybridOptions{Embedder: f.client()})
	defer h.Close()
	cache := NewCatalogCache(CatalogCacheOptions{Hybrid: h, Size: 16})
	tools := hybridTools()
	var cats []*Catalog
	for i := range maxPendingBuilds + 1 {
		list := slices.Clone(tools)
		list[0] = fakeTool("wx", fmt.Sprintf("wx_tool_%d", i), "Daily temperature outlook.", nil)
		cats = append(cats, cache.Catalog(list))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if h.Wait(ctx, cats[maxPendingBuilds]) {
		t.Fatal("the catalogue over the bound has vectors")
	}
	if ctx.Err() != nil {
		t.Fatal("the catalogue over the bound waits instead of staying lexical")
	}
	h.mu.Lock()
	pending := h.pending
	h.mu.Unlock()
	if pending != maxPendingBuilds {
		t.Errorf("%d builds pending, want %d", pending, maxPendingBuilds)
	}
}

func TestDecodeEmbeddings(t *testing.T) {
	tests := []struct {
		name, body, err string
		n               int
	}{
		{"ok", `{"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`, "", 2},
		{"fewer vectors", `{"data":[{"index":0,"embedding":[1]}]}`, "1 vectors for 2 texts", 2},
		{"repeated index", `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`, "bad or repeated index 0", 2},
		{"index out of range", `{"data":[{"index":5,"embedding":[1]}]}`, "bad or repeated index 5", 1},
		{"empty vector", `{"data":[{"index":0,"embedding":[]}]}`, "a vector of 0 dimensions", 1},
		{"lengths differ", `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`, "different lengths", 2},
		{"not JSON", `<html>`, "decode the response", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := decodeEmbeddings([]byte(tt.body), tt.n)
			if tt.err == "" {
				if err != nil || len(v) != tt.n || v[0][0] != 3 {
					t.Errorf("decode = %v, %v", v, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
		})
	}
}

func TestPruneVectorFiles(t *testing.T) {
	dir := t.TempDir()
	v := &denseVectors{dim: 2, data: []float32{1, 0}}
	for i, key := range []string{"a", "b", "c", "d"} {
		if err := writeVectorFile(dir, key, v, 2); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(time.Duration(i-10) * time.Minute)
		_ = os.Chtimes(filepath.Join(dir, key+".vec"), old, old)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.vec"))
	for i := range files {
		files[i] = filepath.Base(files[i])
	}
	if diff := cmp.Diff([]string{"c.vec", "d.vec"}, files); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	got, err := readVectorFile(dir, "d", 1)
	if err != nil || !cmp.Equal(got, v, cmp.AllowUnexported(denseVectors{})) {
		t.Errorf("read back %+v, %v", got, err)
	}
	if _, err := readVectorFile(dir, "d", 2); err == nil {
		t.Error("a file of one vector read for two tools")
	}
}
