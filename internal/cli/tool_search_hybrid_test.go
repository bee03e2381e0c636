package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestToolsSearch_hybridWithEmbeddingsEndpoint names a local
// OpenAI-compatible embeddings endpoint in tool_search.embeddings: a
// query that shares no word with a tool finds it by meaning, the
// catalogue's vectors are cached under the home, and a second search
// embeds only its query.
func TestToolsSearch_hybridWithEmbeddingsEndpoint(t *testing.T) {
	var docTexts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&in) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i, text := range in.Input {
			if strings.Contains(text, "\n") {
				docTexts.Add(1)
			}
			// Two meanings: weather (rain, umbrella, forecast) and code.
			v := []float32{0.01, 0.01}
			for _, w := range []string{"rain", "umbrella", "forecast"} {
				if strings.Contains(strings.ToLower(text), w) {
					v[0]++
				}
			}
			if strings.Contains(strings.ToLower(text), "issue") {
				v[1]++
			}
			out.Data = append(out.Data, item{i, v})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	defer srv.Close()

	cfg, dir := mcpFixture(t, true)
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	withEmbeddings := strings.Replace(string(data), "tool_search: {enabled: true}",
		"tool_search: {enabled: true, embeddings: {model: fake-embed, base_url: '"+srv.URL+"/v1'}}", 1)
	if err := os.WriteFile(cfg, []byte(withEmbeddings), 0o600); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "search", "--limit", "1", "do I need an umbrella")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.HasPrefix(out, "fake_get_weather\t") {
			t.Errorf("round %d: %q, want fake_get_weather found by meaning", round, out)
		}
	}
	if n := docTexts.Load(); n != 2 {
		t.Errorf("%d tool texts embedded over two searches, want the catalogue's 2 once", n)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "cache", "tool-embeddings", "*.vec")); len(files) != 1 {
		t.Errorf("vector files %v, want one under the home", files)
	}
}
