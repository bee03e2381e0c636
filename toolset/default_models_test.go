package toolset

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/model/openai"
)

func modelEnv(models ...config.Model) *Env {
	return &Env{Config: &config.Config{Path: "/etc/antler/config.yaml", Models: models}}
}

func TestModelUsesRegistered(t *testing.T) {
	r := DefaultRegistry()
	for _, use := range []string{
		"langchain_openai:ChatOpenAI",
		"langchain_deepseek:ChatDeepSeek",
		"langchain_ollama:ChatOllama",
		"langchain_anthropic:ChatAnthropic",
		"deerflow.models.patched_deepseek:PatchedChatDeepSeek",
		"deerflow.models.patched_openai:PatchedChatOpenAI",
		"deerflow.models.vllm_provider:VllmChatModel",
		"deerflow.models.patched_mimo:PatchedChatMiMo",
		"deerflow.models.patched_stepfun:PatchedChatStepFun",
		"deerflow.models.patched_minimax:PatchedChatMiniMax",
		"deerflow.models.mindie_provider:MindIEChatModel",
		"langchain_google_genai:ChatGoogleGenerativeAI",
		"antler:openai", "antler:anthropic", "antler:deepseek", "antler:ollama", "antler:vllm",
		"antler:mimo", "antler:stepfun", "antler:minimax", "antler:mindie", "antler:gemini",
	} {
		if _, ok := r.Model(use); !ok {
			t.Errorf("model use %q is not registered", use)
		}
	}
}

// TestBuildModelWithoutKey checks that every provider builds with no
// variable set and reports the missing key at the first call, in one
// line naming the entry and what to set.
func TestBuildModelWithoutKey(t *testing.T) {
	for _, v := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "DEEPSEEK_API_KEY", "DEEPSEEK_API_BASE",
		"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OLLAMA_HOST",
		"MIMO_API_KEY", "STEPFUN_API_KEY", "MINIMAX_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"} {
		t.Setenv(v, "")
	}
	tests := []struct {
		use  string
		want string // "" = builds and needs no key
	}{
		{"langchain_openai:ChatOpenAI", `model "m" (openai): no API key; set OPENAI_API_KEY or api_key in models[1]`},
		{"antler:deepseek", `model "m" (deepseek): no API key; set DEEPSEEK_API_KEY or api_key in models[1]`},
		{"langchain_anthropic:ChatAnthropic", `model "m" (anthropic): no API key; set ANTHROPIC_API_KEY or api_key in models[1]`},
		{"langchain_ollama:ChatOllama", ""},
		{"deerflow.models.vllm_provider:VllmChatModel", ""},
		{"deerflow.models.patched_mimo:PatchedChatMiMo", `model "m" (mimo): no API key; set MIMO_API_KEY or api_key in models[1]`},
		{"deerflow.models.patched_stepfun:PatchedChatStepFun", `model "m" (stepfun): no API key; set STEPFUN_API_KEY or api_key in models[1]`},
		{"deerflow.models.patched_minimax:PatchedChatMiniMax", `model "m" (minimax): no API key; set MINIMAX_API_KEY or api_key in models[1]`},
		{"langchain_google_genai:ChatGoogleGenerativeAI", `model "m" (gemini): no API key; set GEMINI_API_KEY or gemini_api_key in models[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.use, func(t *testing.T) {
			entry := config.Model{Name: "m", Use: tt.use, Model: "some-model", Line: 9}
			env := modelEnv(config.Model{Name: "other", Line: 3}, entry)
			m, err := DefaultRegistry().BuildModel(t.Context(), env, entry, 1)
			if err != nil {
				t.Fatalf("BuildModel: %v", err)
			}
			if tt.want == "" {
				return
			}
			_, err = model.Collect(t.Context(), m, &model.Request{Messages: []model.Message{model.UserText("hi")}}, nil)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestBuildModelOptionsReachTheRequest(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{Text: "ok"})
	entry := config.Model{
		Name: "doubao", Use: "deerflow.models.patched_deepseek:PatchedChatDeepSeek", Model: "doubao-seed",
		SupportsThinking: true,
		Options: map[string]any{
			"api_base":    srv.URL,
			"api_key":     "sk-test",
			"max_tokens":  8192,
			"temperature": 0.7,
			"timeout":     600.0,
			"max_retries": 0,
			"extra_body":  map[string]any{"top_k": 4},
			"top_p":       0.9,
			"when_thinking_enabled": map[string]any{
				"extra_body": map[string]any{"thinking": map[string]any{"type": "enabled"}},
			},
			"when_thinking_disabled": map[string]any{
				"extra_body": map[string]any{"thinking": map[string]any{"type": "disabled"}},
			},
			"context_window": 256000, // ignored
			// Unknown to every provider: sent as LangChain sends a keyword
			// argument it moved into model_kwargs.
			"presence_penalty": 0.5,
		},
	}
	m, err := DefaultRegistry().BuildModel(t.Context(), modelEnv(entry), entry, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(*openai.Model).BaseURL(); got != srv.URL {
		t.Errorf("base URL = %q, want %q", got, srv.URL)
	}
	req := &model.Request{Messages: []model.Message{model.UserText("hi")}, Thinking: true}
	if _, err := model.Collect(t.Context(), m, req, nil); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(srv.Bodies()[0], &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model": "doubao-seed", "max_tokens": 8192.0, "temperature": 0.7, "top_k": 4.0, "top_p": 0.9,
		"thinking": map[string]any{"type": "enabled"}, "presence_penalty": 0.5,
	}
	for k, v := range want {
		if diff := cmp.Diff(v, body[k]); diff != "" {
			t.Errorf("body[%q] (-want +got):\n%s", k, diff)
		}
	}
	if _, ok := body["context_window"]; ok {
		t.Error("context_window leaked into the request")
	}
}

func TestBuildModelBadOption(t *testing.T) {
	entry := config.Model{Name: "m", Use: "antler:openai", Model: "gpt", Line: 4,
		Options: map[string]any{"max_tokens": "lots"}}
	_, err := DefaultRegistry().BuildModel(t.Context(), modelEnv(entry), entry, 0)
	if err == nil {
		t.Fatal("no error")
	}
	// The registry's config.Error keeps the factory's error as its cause.
	text := err.Error()
	if cause := errors.Unwrap(err); cause != nil {
		text += ": " + cause.Error()
	}
	for _, s := range []string{"models[0]", "max_tokens", "config.yaml"} {
		if !strings.Contains(text, s) {
			t.Errorf("error %q does not mention %q", text, s)
		}
	}
}

func TestOllamaBaseURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"localhost:11434", "http://localhost:11434/v1"},
		{"http://127.0.0.1:11434", "http://127.0.0.1:11434/v1"},
		{"http://127.0.0.1:11434/", "http://127.0.0.1:11434/v1"},
		{"http://gpu-box:11434/v1", "http://gpu-box:11434/v1"},
		{"https://proxy.example/ollama/v1", "https://proxy.example/ollama/v1"},
	}
	for _, tt := range tests {
		if got := ollamaBaseURL(tt.in); got != tt.want {
			t.Errorf("ollamaBaseURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOllamaDefaultsToLocalhost(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	entry := config.Model{Name: "local", Use: "langchain_ollama:ChatOllama", Model: "qwen3"}
	m, err := DefaultRegistry().BuildModel(t.Context(), modelEnv(entry), entry, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(*openai.Model).BaseURL(); got != "http://localhost:11434/v1" {
		t.Errorf("base URL = %q", got)
	}
}

// TestDeerFlowExampleModelsBuild builds every models[] entry of the
// DeerFlow-style example config through DefaultRegistry.
func TestDeerFlowExampleModelsBuild(t *testing.T) {
	path := filepath.Join("..", "config", "testdata", "deerflow-config.example.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(path, data, func(k string) (string, bool) { return "test-" + k, true })
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	if len(cfg.Models) == 0 {
		t.Fatal("no models in the example")
	}
	env := &Env{Config: cfg}
	for i, e := range cfg.Models {
		m, err := DefaultRegistry().BuildModel(t.Context(), env, e, i)
		if err != nil {
			t.Errorf("models[%d] %s (%s): %v", i, e.Name, e.Use, err)
			continue
		}
		if om, ok := m.(*openai.Model); ok && e.Use == "langchain_ollama:ChatOllama" {
			if got := om.BaseURL(); got != "http://localhost:11434/v1" {
				t.Errorf("models[%d] ollama base URL = %q", i, got)
			}
		}
	}
}
