package gateway_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

func TestSuggestionsConfig(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		want         map[string]any
	}{
		{"DeerFlow's defaults", "", map[string]any{"enabled": true, "max_suggestions": float64(3)}},
		{"as set", "suggestions: {enabled: false, max_suggestions: 5}\n", map[string]any{"enabled": false, "max_suggestions": float64(5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{config: tc.config})
			var got map[string]any
			e.json("GET", "/api/suggestions/config", "", nil, 200, &got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSuggestions(t *testing.T) {
	conversation := []map[string]any{{"role": "user", "content": "What is Go?"}, {"role": "assistant", "content": "A language."}}
	tests := []struct {
		name   string
		config string
		turn   modeltest.Turn
		body   map[string]any
		status int
		want   []string
		// asked says whether the model is called.
		asked bool
	}{
		{name: "fenced list after a think block, cut to n",
			turn: modeltest.Turn{Text: "<think>hmm</think>\n```json\n[\"Who made Go?\", \"Is Go\\nfast?\", 3, \" \", \"Extra?\"]\n```"},
			body: map[string]any{"messages": conversation, "n": 2}, status: 200, want: []string{"Who made Go?", "Is Go fast?"}, asked: true},
		{name: "n capped by max_suggestions", config: "suggestions: {max_suggestions: 1}\n",
			turn: modeltest.Turn{Text: `["a?", "b?"]`},
			body: map[string]any{"messages": conversation, "n": 4}, status: 200, want: []string{"a?"}, asked: true},
		{name: "no JSON list", turn: modeltest.Turn{Text: "Sorry, no."},
			body: map[string]any{"messages": conversation}, status: 200, want: []string{}, asked: true},
		{name: "model failure answers none", turn: modeltest.Turn{Status: 500, Error: "down"},
			body: map[string]any{"messages": conversation}, status: 200, want: []string{}, asked: true},
		{name: "disabled answers none", config: "suggestions: {enabled: false}\n",
			body: map[string]any{"messages": conversation}, status: 200, want: []string{}},
		{name: "no messages answers none", body: map[string]any{"messages": []any{}}, status: 200, want: []string{}},
		{name: "n above 5 refused", body: map[string]any{"messages": conversation, "n": 6}, status: 422},
		{name: "messages required", body: map[string]any{"n": 2}, status: 422},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := modeltest.New(tc.turn)
			e := newEnv(t, envOptions{model: m, config: tc.config})
			e.json("POST", "/api/threads", "", map[string]any{"thread_id": "t1"}, 200, nil)
			var got struct {
				Suggestions []string `json:"suggestions"`
			}
			e.json("POST", "/api/threads/t1/suggestions", "", tc.body, tc.status, &got)
			if tc.status != 200 {
				return
			}
			if diff := cmp.Diff(tc.want, got.Suggestions); diff != "" {
				t.Errorf("suggestions (-want +got):\n%s", diff)
			}
			if asked := m.Calls() > 0; asked != tc.asked {
				t.Fatalf("model asked: %v, want %v", asked, tc.asked)
			}
			if tc.asked {
				req := m.LastRequest()
				if req.Messages[0].Role != model.RoleSystem || !strings.Contains(req.Messages[0].Content, "JSON array") ||
					!strings.Contains(req.Messages[1].Content, "User: What is Go?\nAssistant: A language.") || len(req.Tools) != 0 {
					t.Errorf("request to the model = %+v", req.Messages)
				}
			}
		})
	}
}

func TestSuggestions_otherUsersThreadIsNotFound(t *testing.T) {
	e := newEnv(t, envOptions{tokens: []config.GatewayToken{{Token: "tok-alice", UserID: "alice"}, {Token: "tok-bob", UserID: "bob"}}})
	e.json("POST", "/api/threads", "tok-alice", map[string]any{"thread_id": "ta"}, 200, nil)
	body := map[string]any{"messages": []map[string]any{{"role": "user", "content": "hi"}}}
	if got := e.status("POST", "/api/threads/ta/suggestions", "tok-bob", body); got != 404 {
		t.Errorf("bob's suggestions on alice's thread = %d, want 404", got)
	}
}

func TestInputPolish(t *testing.T) {
	tests := []struct {
		name   string
		config string
		turn   modeltest.Turn
		text   any
		status int
		want   map[string]any
	}{
		{name: "rewritten", turn: modeltest.Turn{Text: "<think>plan</think>```\nSummarise report.pdf in three bullet points.\n```"},
			text: "  summarise report.pdf  ", status: 200,
			want: map[string]any{"rewritten_text": "Summarise report.pdf in three bullet points.", "changed": true}},
		{name: "unchanged", turn: modeltest.Turn{Text: "Fix the bug."}, text: "Fix the bug.", status: 200,
			want: map[string]any{"rewritten_text": "Fix the bug.", "changed": false}},
		{name: "an unclosed think tag is kept", turn: modeltest.Turn{Text: "Explain the <think> tag."}, text: "what is <think>", status: 200,
			want: map[string]any{"rewritten_text": "Explain the <think> tag.", "changed": true}},
		{name: "max_chars counts characters", config: "input_polish: {max_chars: 3}\n", turn: modeltest.Turn{Text: "ok"},
			text: "日本語", status: 200, want: map[string]any{"rewritten_text": "ok", "changed": true}},
		{name: "too long", config: "input_polish: {max_chars: 3}\n", text: "four", status: 400,
			want: map[string]any{"detail": "Input text exceeds 3 characters"}},
		{name: "blank", text: "   ", status: 400, want: map[string]any{"detail": "Input text is required"}},
		{name: "text required", status: 422, want: map[string]any{"detail": "text: field required"}},
		{name: "disabled", config: "input_polish: {enabled: false}\n", text: "x", status: 404,
			want: map[string]any{"detail": "Input polishing is disabled"}},
		{name: "model failure", turn: modeltest.Turn{Status: 500, Error: "down"}, text: "x", status: 503,
			want: map[string]any{"detail": "Failed to polish input"}},
		{name: "empty rewrite", turn: modeltest.Turn{Text: "<think>only thoughts</think>"}, text: "x", status: 503,
			want: map[string]any{"detail": "Failed to polish input"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := modeltest.New(tc.turn)
			e := newEnv(t, envOptions{model: m, config: tc.config})
			body := map[string]any{"locale": "en-US"}
			if tc.text != nil {
				body["text"] = tc.text
			}
			var got map[string]any
			e.json("POST", "/api/input-polish", "", body, tc.status, &got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if tc.status == 200 {
				user := m.LastRequest().Messages[1].Content
				if !strings.Contains(user, "Locale hint: en-US") || !strings.Contains(user, "<draft>\n"+strings.TrimSpace(tc.text.(string))+"\n</draft>") {
					t.Errorf("user message = %q", user)
				}
			}
		})
	}
}

func TestChannelsAndIntegrationsAnswerNotConfigured(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, tc := range []struct {
		method, path string
		status       int
		want         map[string]any
	}{
		{"GET", "/api/channels/", 200, map[string]any{"service_running": false, "channels": map[string]any{}}},
		{"GET", "/api/channels/providers", 200, map[string]any{"enabled": false, "providers": []any{}}},
		{"GET", "/api/channels/connections", 200, map[string]any{"connections": []any{}}},
		{"POST", "/api/channels/slack/connect", 400, map[string]any{"detail": "Channel connections are disabled"}},
		{"POST", "/api/channels/slack/runtime-config", 400, map[string]any{"detail": "Channel connections are disabled"}},
		{"DELETE", "/api/channels/slack/runtime-config", 400, map[string]any{"detail": "Channel connections are disabled"}},
		{"DELETE", "/api/channels/connections/c1", 400, map[string]any{"detail": "Channel connections are disabled"}},
		{"POST", "/api/integrations/lark/auth/start", 501, map[string]any{"detail": "The Lark/Feishu integration is not available in Antler"}},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var got map[string]any
			e.json(tc.method, tc.path, "", nil, tc.status, &got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
	var lark map[string]any
	e.json("GET", "/api/integrations/lark/status", "", nil, 200, &lark)
	if lark["installed"] != false || lark["app_configured"] != false || lark["sandbox_runtime_mode"] != "none" ||
		lark["auth"].(map[string]any)["status"] != "unavailable" || lark["cli"].(map[string]any)["available"] != false {
		t.Errorf("lark status = %v", lark)
	}
}

func TestWorkspaceChanges(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.json("POST", "/api/threads", "", map[string]any{"thread_id": "t1"}, 200, nil)
	var got map[string]any
	e.json("GET", "/api/threads/t1/runs/r1/workspace-changes?include_files=true&include_diff=false", "", nil, 200, &got)
	want := map[string]any{"available": false, "version": float64(1), "files": []any{}, "limits": map[string]any{},
		"summary": map[string]any{"created": float64(0), "modified": float64(0), "deleted": float64(0), "symlink_created": float64(0),
			"additions": float64(0), "deletions": float64(0), "truncated": false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if s := e.status("GET", "/api/threads/nope/runs/r1/workspace-changes", "", nil); s != 404 {
		t.Errorf("unknown thread = %d, want 404", s)
	}
}
