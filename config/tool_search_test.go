package config_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
)

func TestToolSearchDeferral(t *testing.T) {
	tests := []struct {
		name, src string
		want      config.ToolSearch
		err       string
	}{
		{
			name: "defaults",
			src:  "tool_search: {enabled: true}\n",
			want: config.ToolSearch{Enabled: true, AutoPromoteTopK: 3, MaxResults: 5, Defer: "always", AutoContextPercent: 10},
		},
		{
			name: "auto with both rules and per-tool settings",
			src:  "tool_search:\n  enabled: true\n  defer: auto\n  auto_context_percent: 5\n  auto_tool_count: 40\n  tools: {web_search: always, github_create_issue: never}\n",
			want: config.ToolSearch{Enabled: true, AutoPromoteTopK: 3, MaxResults: 5, Defer: "auto", AutoContextPercent: 5, AutoToolCount: 40,
				Tools: map[string]string{"web_search": "always", "github_create_issue": "never"}},
		},
		{name: "unknown mode", src: "tool_search: {defer: sometimes}\n", err: `config.yaml:1: tool_search.defer: must be "always" or "auto", not "sometimes"`},
		{name: "never is per tool only", src: "tool_search: {defer: never}\n", err: `tool_search.defer: must be "always" or "auto", not "never"`},
		{name: "zero share", src: "tool_search: {auto_context_percent: 0}\n", err: "tool_search.auto_context_percent: must be more than 0 and at most 100, got 0"},
		{name: "share over 100", src: "tool_search: {auto_context_percent: 150}\n", err: "tool_search.auto_context_percent: must be more than 0 and at most 100, got 150"},
		{name: "negative count", src: "tool_search: {auto_tool_count: -1}\n", err: "tool_search.auto_tool_count: must be at least 0, got -1"},
		{name: "bad tool mode", src: "tool_search:\n  tools: {ls: maybe}\n", err: `config.yaml:2: tool_search.tools.ls: must be "always", "never" or "auto", not "maybe"`},
		{
			name: "embeddings defaults",
			src:  "tool_search:\n  embeddings: {model: nomic-embed-text}\n",
			want: config.ToolSearch{AutoPromoteTopK: 3, MaxResults: 5, Defer: "always", AutoContextPercent: 10,
				Embeddings: config.ToolSearchEmbeddings{Model: "nomic-embed-text", BaseURL: "https://api.openai.com/v1", QueryTimeoutMS: 500, BuildTimeoutSeconds: 600}},
		},
		{name: "embeddings base_url without a model", src: "tool_search:\n  embeddings: {base_url: 'http://127.0.0.1:11434/v1'}\n",
			err: "tool_search.embeddings.model: is required when base_url or api_key is set"},
		{name: "embeddings base_url not http", src: "tool_search:\n  embeddings: {model: m, base_url: 'ftp://x'}\n",
			err: `tool_search.embeddings.base_url: must be an http or https URL, got "ftp://x"`},
		{name: "embeddings negative timeout", src: "tool_search:\n  embeddings: {model: m, query_timeout_ms: -5}\n",
			err: "tool_search.embeddings.query_timeout_ms: must be at least 1, got -5"},
		{
			name: "embeddings similarity floor",
			src:  "tool_search:\n  embeddings: {model: m, min_similarity: 0.35}\n",
			want: config.ToolSearch{AutoPromoteTopK: 3, MaxResults: 5, Defer: "always", AutoContextPercent: 10,
				Embeddings: config.ToolSearchEmbeddings{Model: "m", BaseURL: "https://api.openai.com/v1", QueryTimeoutMS: 500, BuildTimeoutSeconds: 600, MinSimilarity: 0.35}},
		},
		{name: "embeddings similarity floor of 1", src: "tool_search:\n  embeddings: {model: m, min_similarity: 1}\n",
			err: "tool_search.embeddings.min_similarity: must be at least 0 and below 1 (a cosine similarity), got 1"},
		{name: "embeddings negative similarity floor", src: "tool_search:\n  embeddings: {model: m, min_similarity: -0.2}\n",
			err: "tool_search.embeddings.min_similarity: must be at least 0 and below 1 (a cosine similarity), got -0.2"},
		{name: "provider search", src: "tool_search: {provider_search: bm25}\n",
			want: config.ToolSearch{AutoPromoteTopK: 3, MaxResults: 5, Defer: "always", AutoContextPercent: 10, ProviderSearch: "bm25"}},
		{name: "unknown provider search", src: "tool_search: {provider_search: vector}\n",
			err: `tool_search.provider_search: must be "regex", "bm25" or empty, not "vector"`},
		{name: "tool_search itself", src: "tool_search:\n  tools: {tool_search: always}\n", err: "tool_search.tools.tool_search: tool_search cannot be deferred"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Parse("config.yaml", []byte(tt.src), nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, c.ToolSearch); diff != "" {
				t.Errorf("tool_search (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMCPServerDefer(t *testing.T) {
	tests := []struct {
		name, entry, want, err string
	}{
		{name: "unset follows the section", entry: `{"command": "x"}`, want: ""},
		{name: "never", entry: `{"command": "x", "defer": "never"}`, want: config.DeferNever},
		{name: "auto", entry: `{"command": "x", "defer": "auto"}`, want: config.DeferAuto},
		{name: "bad", entry: `{"command": "x", "defer": "yes"}`, err: `mcpServers.s.defer: must be "always", "never" or "auto", not "yes"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ext, err := config.ParseExtensions("e.json", []byte(`{"mcpServers": {"s": `+tt.entry+`}}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			s := ext.MCPServers["s"]
			switch {
			case tt.err != "" && (s.Err == nil || !strings.Contains(s.Err.Error(), tt.err)):
				t.Errorf("err = %v, want it to contain %q", s.Err, tt.err)
			case tt.err == "" && (s.Err != nil || s.Defer != tt.want):
				t.Errorf("defer = %q, err %v; want %q", s.Defer, s.Err, tt.want)
			}
		})
	}
}
