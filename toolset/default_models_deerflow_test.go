package toolset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/gemini"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/model/openai"
)

// TestDeerFlowModelUsesBuild builds one entry for each model use string
// of DeerFlow's config.example.yaml (testdata/deerflow-models.yaml) with
// the keys DeerFlow's example sets, and checks which provider serves it.
func TestDeerFlowModelUsesBuild(t *testing.T) {
	path := filepath.Join("testdata", "deerflow-models.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(path, data, func(k string) (string, bool) { return "test-" + k, true })
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	want := map[string]string{ // use -> provider type
		"deerflow.models.patched_deepseek:PatchedChatDeepSeek": "openai",
		"langchain_openai:ChatOpenAI":                          "openai",
		"langchain_ollama:ChatOllama":                          "openai",
		"langchain_anthropic:ChatAnthropic":                    "anthropic",
		"langchain_google_genai:ChatGoogleGenerativeAI":        "gemini",
		"deerflow.models.patched_openai:PatchedChatOpenAI":     "openai",
		"deerflow.models.patched_mimo:PatchedChatMiMo":         "openai",
		"deerflow.models.patched_stepfun:PatchedChatStepFun":   "openai",
		"deerflow.models.patched_minimax:PatchedChatMiniMax":   "openai",
		"deerflow.models.vllm_provider:VllmChatModel":          "openai",
		"deerflow.models.mindie_provider:MindIEChatModel":      "openai",
	}
	var uses []string
	env := &Env{Config: cfg}
	for i, entry := range cfg.Models {
		uses = append(uses, entry.Use)
		m, err := DefaultRegistry().BuildModel(t.Context(), env, entry, i)
		if err != nil {
			t.Errorf("models[%d] %s (%s): %v", i, entry.Name, entry.Use, err)
			continue
		}
		var got string
		switch m.(type) {
		case *openai.Model:
			got = "openai"
		case *gemini.Model:
			got = "gemini"
		default:
			got = "anthropic"
		}
		if got != want[entry.Use] {
			t.Errorf("models[%d] %s: provider %s, want %s", i, entry.Use, got, want[entry.Use])
		}
	}
	slices.Sort(uses)
	wantUses := make([]string, 0, len(want))
	for u := range want {
		wantUses = append(wantUses, u)
	}
	slices.Sort(wantUses)
	if diff := cmp.Diff(wantUses, slices.Compact(uses)); diff != "" {
		t.Errorf("use strings of the fixture (-want +got):\n%s", diff)
	}
}

// TestCompatibleFlavoursShapeRequests sends one tool-call turn and its
// follow-up through each OpenAI-compatible flavour DeerFlow patches and
// checks what reaches the server: MiMo and StepFun replay
// reasoning_content; MiniMax forces reasoning_split (over extra_body) and
// sends no user-message name; MindIE sends text only, unstreamed.
func TestCompatibleFlavoursShapeRequests(t *testing.T) {
	turn := modeltest.Turn{Reasoning: "Need a listing.", ToolCalls: []model.ToolCall{
		{ID: "call_1", Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt/user-data"}`)}}}
	tests := []struct {
		use   string
		extra map[string]any
		check func(t *testing.T, first, second map[string]any)
	}{
		{"deerflow.models.patched_mimo:PatchedChatMiMo", nil, replaysReasoning},
		{"deerflow.models.patched_stepfun:PatchedChatStepFun", nil, replaysReasoning},
		{"deerflow.models.patched_minimax:PatchedChatMiniMax", map[string]any{"extra_body": map[string]any{"reasoning_split": false, "top_k": 3}},
			func(t *testing.T, first, second map[string]any) {
				if first["reasoning_split"] != true || first["top_k"] != 3.0 {
					t.Errorf("body = %v, want reasoning_split true and top_k 3", first)
				}
				for _, raw := range first["messages"].([]any) {
					if msg := raw.(map[string]any); msg["role"] == "user" && msg["name"] != nil {
						t.Errorf("user message with a name: %v", msg)
					}
				}
			}},
		{"deerflow.models.mindie_provider:MindIEChatModel", nil, func(t *testing.T, first, second map[string]any) {
			if s, _ := first["stream"].(bool); s {
				t.Error("MindIE request with tools was streamed")
			}
			for _, raw := range second["messages"].([]any) {
				if msg := raw.(map[string]any); msg["role"] == "tool" || msg["tool_calls"] != nil {
					t.Errorf("MindIE message is not text: %v", msg)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.use, func(t *testing.T) {
			srv := modeltest.NewServer(t, turn, modeltest.Turn{Text: "done"})
			opts := map[string]any{"base_url": srv.URL, "api_key": "sk-test", "max_retries": 0}
			for k, v := range tt.extra {
				opts[k] = v
			}
			entry := config.Model{Name: "m", Use: tt.use, Model: "some-model", Options: opts}
			m, err := DefaultRegistry().BuildModel(t.Context(), modelEnv(entry), entry, 0)
			if err != nil {
				t.Fatal(err)
			}
			req := &model.Request{Messages: []model.Message{model.SystemText("sys"), {Role: model.RoleUser, Content: "list", Name: "user-input"}},
				Tools: []model.ToolDefinition{{Name: "ls", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
			resp, err := model.Collect(t.Context(), m, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Messages = append(req.Messages, resp.Message, model.Message{Role: model.RoleTool, ToolCallID: "call_1", Name: "ls", Content: "uploads"})
			if _, err := model.Collect(t.Context(), m, req, nil); err != nil {
				t.Fatal(err)
			}
			bodies := srv.Bodies()
			if len(bodies) != 2 {
				t.Fatalf("%d requests, want 2", len(bodies))
			}
			var first, second map[string]any
			if err := json.Unmarshal(bodies[0], &first); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(bodies[1], &second); err != nil {
				t.Fatal(err)
			}
			tt.check(t, first, second)
		})
	}
}

func replaysReasoning(t *testing.T, _, second map[string]any) {
	t.Helper()
	msgs := second["messages"].([]any)
	assistant := msgs[2].(map[string]any)
	if assistant["reasoning_content"] != "Need a listing." {
		t.Errorf("assistant message = %v, want reasoning_content replayed", assistant)
	}
}

func TestMindIEEntry(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	entry := config.Model{Name: "mindie", Use: "deerflow.models.mindie_provider:MindIEChatModel", Model: "q"}
	if _, err := DefaultRegistry().BuildModel(t.Context(), modelEnv(entry), entry, 0); err == nil {
		t.Error("MindIE entry without base_url built")
	}
	for name, o := range map[string]map[string]any{
		"defaults":     {},
		"read_timeout": {"read_timeout": 120.0, "connect_timeout": 5.0},
		"timeout wins": {"timeout": 60.0, "read_timeout": 120.0},
	} {
		t.Run(name, func(t *testing.T) {
			o["base_url"] = "http://127.0.0.1:8989/v1"
			o["api_key"] = "k"
			d, err := decodeModelOptions(config.Model{Options: o})
			if err != nil {
				t.Fatal(err)
			}
			timeout, connect := mindIETimeouts(d)
			want := map[string][2]time.Duration{
				"defaults":     {900 * time.Second, 30 * time.Second},
				"read_timeout": {120 * time.Second, 5 * time.Second},
				"timeout wins": {60 * time.Second, 30 * time.Second},
			}[name]
			if timeout != want[0] || connect != want[1] {
				t.Errorf("timeouts = %v, %v; want %v, %v", timeout, connect, want[0], want[1])
			}
		})
	}
}

func TestGeminiEntryOptions(t *testing.T) {
	entry := config.Model{Name: "g", Use: "langchain_google_genai:ChatGoogleGenerativeAI", Model: "gemini-2.5-pro",
		SupportsThinking: true, Options: map[string]any{
			"gemini_api_key":         "AIza",
			"max_tokens":             8192,
			"thinking_budget":        1024,
			"when_thinking_disabled": map[string]any{"thinking_budget": 0},
		}}
	if _, err := DefaultRegistry().BuildModel(t.Context(), modelEnv(entry), entry, 0); err != nil {
		t.Fatal(err)
	}
	entry.Options["when_thinking_enabled"] = map[string]any{"extra_body": map[string]any{"thinking": "on"}}
	_, err := DefaultRegistry().BuildModel(t.Context(), modelEnv(entry), entry, 0)
	if err == nil {
		t.Fatal("an OpenAI-style extra_body in when_thinking_enabled built a Gemini model")
	}
}
