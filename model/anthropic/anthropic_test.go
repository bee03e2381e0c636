package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/anthropic"
)

// fake is a Messages API endpoint that answers every request with a
// fixed HTTP status and body (SSE events when status is 200) and records
// the request bodies.
type fake struct {
	status int
	body   string
	block  bool // after the body, hold the stream open until the client goes

	mu     sync.Mutex
	bodies [][]byte
	header http.Header
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, b)
	f.header = r.Header.Clone()
	f.mu.Unlock()
	if r.URL.Path != "/v1/messages" {
		http.NotFound(w, r)
		return
	}
	if f.status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		io.WriteString(w, f.body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, f.body)
	w.(http.Flusher).Flush()
	if f.block {
		<-r.Context().Done()
	}
}

func start(t *testing.T, f *fake) string {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sse renders events as the API streams them: "event: type" then the
// data line.
func sse(events ...string) string {
	var b strings.Builder
	for _, data := range events {
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(data), &head); err != nil {
			panic(fmt.Sprintf("bad event %s: %v", data, err))
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", head.Type, data)
	}
	return b.String()
}

const (
	messageStart = `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_read_input_tokens":5,"output_tokens":1}}}`
	ping         = `{"type":"ping"}`
	messageStop  = `{"type":"message_stop"}`
)

func stopWith(reason string, out int) string {
	return fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, reason, out)
}

func newModel(t *testing.T, url string, edit func(*anthropic.Options)) *anthropic.Model {
	t.Helper()
	opts := anthropic.Options{Name: "claude", ConfigKey: "models[1]", Model: "claude-test",
		APIKey: "sk-ant-test", BaseURL: url, MaxRetries: -1}
	if edit != nil {
		edit(&opts)
	}
	m, err := anthropic.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func run(ctx context.Context, m model.ChatModel, req *model.Request) ([]model.Event, error) {
	var evs []model.Event
	for ev, err := range m.Generate(ctx, req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func hello() *model.Request {
	return &model.Request{Messages: []model.Message{model.SystemText("be brief"), model.UserText("hi")}}
}

var raw = cmp.Transformer("raw", func(r json.RawMessage) string { return string(r) })

func TestGenerateStream(t *testing.T) {
	tests := []struct {
		name          string
		events        []string
		wantText      string
		wantReasoning string
		wantCalls     []model.ToolCall
		wantDeltas    []model.ToolCallDelta
		wantFinish    model.FinishReason
		wantUsage     model.Usage
		wantSignature string
	}{
		{
			name: "text",
			events: []string{messageStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, ping,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", world"}}`,
				`{"type":"content_block_stop","index":0}`,
				stopWith("end_turn", 15), messageStop},
			wantText:   "Hello, world",
			wantFinish: model.FinishStop,
			wantUsage:  model.Usage{InputTokens: 30, OutputTokens: 15, TotalTokens: 45},
		},
		{
			name: "thinking, text and two tool calls",
			events: []string{messageStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"List first, "}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"then read."}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Looking."}}`,
				`{"type":"content_block_stop","index":1}`,
				`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"ls","input":{}}}`,
				`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`,
				`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"/mnt/"}}`,
				`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"user-data\"}"}}`,
				`{"type":"content_block_stop","index":2}`,
				`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_02","name":"glob","input":{}}}`,
				`{"type":"content_block_stop","index":3}`,
				stopWith("tool_use", 89), messageStop},
			wantText:      "Looking.",
			wantReasoning: "List first, then read.",
			wantSignature: "EqQBCgIYAhIM",
			wantCalls: []model.ToolCall{
				{ID: "toolu_01", Name: "ls", Arguments: json.RawMessage(`{"path": "/mnt/user-data"}`)},
				{ID: "toolu_02", Name: "glob", Arguments: json.RawMessage(`{}`)},
			},
			wantDeltas: []model.ToolCallDelta{
				{Index: 0, ID: "toolu_01", Name: "ls"},
				{Index: 0, Arguments: `{"path": "/mnt/`},
				{Index: 0, Arguments: `user-data"}`},
				{Index: 1, ID: "toolu_02", Name: "glob"},
			},
			wantFinish: model.FinishToolCalls,
			wantUsage:  model.Usage{InputTokens: 30, OutputTokens: 89, TotalTokens: 119},
		},
		{
			name: "max tokens",
			events: []string{messageStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cut"}}`,
				stopWith("max_tokens", 4096), messageStop},
			wantText:   "cut",
			wantFinish: model.FinishLength,
			wantUsage:  model.Usage{InputTokens: 30, OutputTokens: 4096, TotalTokens: 4126},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := start(t, &fake{status: 200, body: sse(tt.events...)})
			evs, err := run(t.Context(), newModel(t, url, nil), hello())
			if err != nil {
				t.Fatal(err)
			}
			last := evs[len(evs)-1].Response
			if last == nil {
				t.Fatalf("last event is not a response: %+v", evs[len(evs)-1])
			}
			var text, reasoning strings.Builder
			var deltas []model.ToolCallDelta
			for _, ev := range evs {
				text.WriteString(ev.TextDelta)
				reasoning.WriteString(ev.ReasoningDelta)
				if ev.ToolCallDelta != nil {
					deltas = append(deltas, *ev.ToolCallDelta)
				}
			}
			if text.String() != tt.wantText || last.Message.Content != tt.wantText {
				t.Errorf("text: deltas %q, response %q, want %q", text.String(), last.Message.Content, tt.wantText)
			}
			if reasoning.String() != tt.wantReasoning || last.Message.Reasoning != tt.wantReasoning {
				t.Errorf("reasoning: deltas %q, response %q, want %q", reasoning.String(), last.Message.Reasoning, tt.wantReasoning)
			}
			if diff := cmp.Diff(tt.wantCalls, last.Message.ToolCalls, raw); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDeltas, deltas); diff != "" {
				t.Errorf("tool call deltas (-want +got):\n%s", diff)
			}
			if last.FinishReason != tt.wantFinish {
				t.Errorf("finish = %q, want %q", last.FinishReason, tt.wantFinish)
			}
			if diff := cmp.Diff(tt.wantUsage, last.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if sig, _ := last.Message.Meta["anthropic_thinking_signature"].(string); sig != tt.wantSignature {
				t.Errorf("signature = %q, want %q", sig, tt.wantSignature)
			}
		})
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name       string
		fake       *fake
		wantStatus int
		wantText   []string
	}{
		{
			name:       "authentication",
			fake:       &fake{status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`},
			wantStatus: 401,
			wantText:   []string{`model "claude" (anthropic): HTTP 401 Unauthorized: invalid x-api-key`, "check api_key or ANTHROPIC_API_KEY"},
		},
		{
			name:       "overloaded",
			fake:       &fake{status: 529, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			wantStatus: 529,
			wantText:   []string{`model "claude"`, "HTTP 529", "Overloaded"},
		},
		{
			name: "error mid-stream",
			fake: &fake{status: 200, body: sse(messageStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}}`,
				`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
			wantText: []string{`model "claude"`, "Overloaded"},
		},
		{
			name:     "stream without events",
			fake:     &fake{status: 200, body: ""},
			wantText: []string{`model "claude"`, "without a response"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(t.Context(), newModel(t, start(t, tt.fake), nil), hello())
			var pe *model.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a *model.ProviderError", err, err)
			}
			if pe.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d", pe.StatusCode, tt.wantStatus)
			}
			for _, s := range tt.wantText {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestMissingAPIKey(t *testing.T) {
	m, err := anthropic.New(anthropic.Options{Name: "claude", ConfigKey: "models[1]", Model: "claude-test",
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("New must not fail without a key: %v", err)
	}
	_, err = run(t.Context(), m, hello())
	want := `model "claude" (anthropic): no API key; set ANTHROPIC_API_KEY or api_key in models[1]`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestKeyAndBaseURLFromEnvironment(t *testing.T) {
	f := &fake{status: 200, body: sse(messageStart, stopWith("end_turn", 1), messageStop)}
	url := start(t, f)
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-env", "ANTHROPIC_BASE_URL": url}
	m, err := anthropic.New(anthropic.Options{Name: "claude", Model: "claude-test", MaxRetries: -1,
		Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t.Context(), m, hello()); err != nil {
		t.Fatal(err)
	}
	if got := f.header.Get("X-Api-Key"); got != "sk-env" {
		t.Errorf("x-api-key = %q", got)
	}
	if got := f.header.Get("Authorization"); got != "Bearer sk-env" {
		t.Errorf("authorization = %q", got)
	}
}

func TestCancellation(t *testing.T) {
	f := &fake{status: 200, block: true, body: sse(messageStart)}
	m := newModel(t, start(t, f), nil)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := run(ctx, m, hello())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestRequestShaping(t *testing.T) {
	temp := 0.3
	f := &fake{status: 200, body: sse(messageStart, stopWith("end_turn", 1), messageStop)}
	m := newModel(t, start(t, f), func(o *anthropic.Options) {
		o.MaxTokens = 2048
		o.Temperature = &temp
		o.SupportsThinking = true
		o.ThinkingBody = map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}
		o.ExtraBody = map[string]any{"top_k": 5}
	})
	req := &model.Request{
		Thinking: true,
		Messages: []model.Message{
			model.SystemText("You are DeerFlow."),
			model.SystemText("Today is Monday."),
			{Role: model.RoleUser, Content: "What is this?", Parts: []model.Part{
				{Type: model.PartImage, MIMEType: "image/png", Data: []byte("PNG")},
			}},
			{Role: model.RoleAssistant, Content: "Let me look.", Reasoning: "List it.",
				Meta: map[string]any{"anthropic_thinking_signature": "sig"},
				ToolCalls: []model.ToolCall{
					{ID: "toolu_1", Name: "ls", Arguments: json.RawMessage(`{"path":"/"}`)},
					{ID: "toolu_2", Name: "glob"},
				}},
			{Role: model.RoleTool, ToolCallID: "toolu_1", Content: "a.txt"},
			{Role: model.RoleTool, ToolCallID: "toolu_2", Content: "Error: bad pattern", Status: "error"},
			model.UserText("and now?"),
		},
		Tools: []model.ToolDefinition{{Name: "ls", Description: "List.", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)}},
	}
	if _, err := run(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	want := `{
	  "model": "claude-test",
	  "max_tokens": 2048,
	  "stream": true,
	  "temperature": 0.3,
	  "top_k": 5,
	  "thinking": {"type": "enabled", "budget_tokens": 1024},
	  "system": [{"type": "text", "text": "You are DeerFlow."}, {"type": "text", "text": "Today is Monday."}],
	  "messages": [
	    {"role": "user", "content": [
	      {"type": "text", "text": "What is this?"},
	      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "UE5H"}}
	    ]},
	    {"role": "assistant", "content": [
	      {"type": "thinking", "thinking": "List it.", "signature": "sig"},
	      {"type": "text", "text": "Let me look."},
	      {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "/"}},
	      {"type": "tool_use", "id": "toolu_2", "name": "glob", "input": {}}
	    ]},
	    {"role": "user", "content": [
	      {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "a.txt"}]},
	      {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": [{"type": "text", "text": "Error: bad pattern"}]},
	      {"type": "text", "text": "and now?"}
	    ]}
	  ],
	  "tools": [{"name": "ls", "description": "List.", "input_schema": {
	    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}}]
	}`
	var got, wantV any
	if err := json.Unmarshal(f.bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &wantV); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantV, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// The API's stop_reason reaches Response.Metadata as sent, even where the
// normalised FinishReason says tool_calls (a refusal cut mid tool call).
func TestStopReasonKeptAsSentInMetadata(t *testing.T) {
	for _, reason := range []string{"refusal", "end_turn", "max_tokens"} {
		t.Run(reason, func(t *testing.T) {
			url := start(t, &fake{status: 200, body: sse(messageStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"write_file","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"/mnt/"}}`,
				stopWith(reason, 9), messageStop)})
			evs, err := run(t.Context(), newModel(t, url, nil), hello())
			if err != nil {
				t.Fatal(err)
			}
			last := evs[len(evs)-1].Response
			if last == nil {
				t.Fatalf("last event is not a response: %+v", evs[len(evs)-1])
			}
			if diff := cmp.Diff(map[string]any{model.MetaStopReason: reason}, last.Metadata); diff != "" {
				t.Errorf("Metadata (-want +got):\n%s", diff)
			}
			if last.FinishReason != model.FinishToolCalls {
				t.Errorf("FinishReason = %q, want the normalised tool_calls", last.FinishReason)
			}
		})
	}
}

// TestBaseURLWithAndWithoutV1 checks that a base_url written with the
// version segment (as DeerFlow users write OpenAI roots) reaches the same
// paths as one without it, for messages and for doctor's model listing.
func TestBaseURLWithAndWithoutV1(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/v1/messages", "/proxy/v1/messages":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, sse(messageStart, stopWith("end_turn", 1), messageStop))
		case "/v1/models", "/proxy/v1/models":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"data":[{"type":"model","id":"claude-test","display_name":"Claude","created_at":"2025-01-01T00:00:00Z"}],"has_more":false,"first_id":"claude-test","last_id":"claude-test"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)

	tests := []struct {
		name, base string
		want       []string
	}{
		{"root", srv.URL, []string{"/v1/messages", "/v1/models"}},
		{"root with slash", srv.URL + "/", []string{"/v1/messages", "/v1/models"}},
		{"with v1", srv.URL + "/v1", []string{"/v1/messages", "/v1/models"}},
		{"with v1 and slash", srv.URL + "/v1/", []string{"/v1/messages", "/v1/models"}},
		{"prefixed proxy with v1", srv.URL + "/proxy/v1", []string{"/proxy/v1/messages", "/proxy/v1/models"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			paths = nil
			mu.Unlock()
			m := newModel(t, tt.base, nil)
			if _, err := run(t.Context(), m, hello()); err != nil {
				t.Fatal(err)
			}
			if err := m.Ping(t.Context()); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tt.want, paths); diff != "" {
				t.Errorf("request paths (-want +got):\n%s", diff)
			}
		})
	}
}
