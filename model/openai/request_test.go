package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/model/openai"
)

func conversation() *model.Request {
	return &model.Request{
		Messages: []model.Message{
			model.SystemText("You are DeerFlow."),
			{Role: model.RoleUser, Content: "What is in this picture?", Parts: []model.Part{
				{Type: model.PartImage, MIMEType: "image/png", Data: []byte("PNG")},
			}},
			{Role: model.RoleAssistant, Reasoning: "I should list files.", ToolCalls: []model.ToolCall{
				{ID: "call_1", Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt/user-data"}`)},
				{ID: "call_2", Name: "noargs"},
			}},
			{Role: model.RoleTool, ToolCallID: "call_1", Name: "ls", Content: "uploads\nworkspace"},
			{Role: model.RoleTool, ToolCallID: "call_2", Name: "noargs", Content: "Error: failed", Status: "error"},
			{Role: model.RoleAssistant, Content: "Two folders."},
			{ID: "gone", Remove: true},
			model.UserText("thanks"),
		},
		Tools: []model.ToolDefinition{
			{Name: "ls", Description: "List a directory.", InputSchema: json.RawMessage(
				`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "noargs"},
		},
		Thinking: true,
	}
}

func TestRequestShaping(t *testing.T) {
	temp := 0.2
	tests := []struct {
		name string
		opts func(*openai.Options)
		req  func(*model.Request)
		want string
	}{
		{
			name: "full conversation with options",
			opts: func(o *openai.Options) {
				o.MaxTokens = 1024
				o.Temperature = &temp
				o.ExtraBody = map[string]any{"top_k": 5}
				o.SupportsThinking = true
				o.ThinkingBody = map[string]any{"thinking": map[string]any{"type": "enabled"}}
				o.NoThinkingBody = map[string]any{"thinking": map[string]any{"type": "disabled"}}
				o.EchoReasoning = true
			},
			want: `{
			  "model": "gpt-test",
			  "stream": true,
			  "stream_options": {"include_usage": true},
			  "max_tokens": 1024,
			  "temperature": 0.2,
			  "top_k": 5,
			  "thinking": {"type": "enabled"},
			  "messages": [
			    {"role": "system", "content": "You are DeerFlow."},
			    {"role": "user", "content": [
			      {"type": "text", "text": "What is in this picture?"},
			      {"type": "image_url", "image_url": {"url": "data:image/png;base64,UE5H"}}
			    ]},
			    {"role": "assistant", "reasoning_content": "I should list files.", "tool_calls": [
			      {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{\"path\":\"/mnt/user-data\"}"}},
			      {"id": "call_2", "type": "function", "function": {"name": "noargs", "arguments": "{}"}}
			    ]},
			    {"role": "tool", "tool_call_id": "call_1", "content": "uploads\nworkspace"},
			    {"role": "tool", "tool_call_id": "call_2", "content": "Error: failed"},
			    {"role": "assistant", "content": "Two folders."},
			    {"role": "user", "content": "thanks"}
			  ],
			  "tools": [
			    {"type": "function", "function": {"name": "ls", "description": "List a directory.",
			      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
			    {"type": "function", "function": {"name": "noargs", "parameters": {"type": "object", "properties": {}}}}
			  ]
			}`,
		},
		{
			name: "defaults: no limits, reasoning not echoed, thinking not supported",
			req: func(r *model.Request) {
				r.Messages = r.Messages[5:] // from "Two folders."
				r.Tools = nil
			},
			want: `{
			  "model": "gpt-test",
			  "stream": true,
			  "stream_options": {"include_usage": true},
			  "messages": [
			    {"role": "assistant", "content": "Two folders."},
			    {"role": "user", "content": "thanks"}
			  ]
			}`,
		},
		{
			name: "request overrides, max_completion_tokens, thinking disabled",
			opts: func(o *openai.Options) {
				o.MaxTokens = 1024
				o.UseMaxCompletionTokens = true
				o.Temperature = &temp
				o.SupportsThinking = true
				o.ThinkingBody = map[string]any{"thinking": map[string]any{"type": "enabled"}}
				o.NoThinkingBody = map[string]any{"thinking": map[string]any{"type": "disabled"}}
			},
			req: func(r *model.Request) {
				zero := 0.0
				r.Messages = r.Messages[7:]
				r.Tools = nil
				r.MaxTokens = 50
				r.Temperature = &zero
				r.Thinking = false
			},
			want: `{
			  "model": "gpt-test",
			  "stream": true,
			  "stream_options": {"include_usage": true},
			  "max_completion_tokens": 50,
			  "temperature": 0,
			  "thinking": {"type": "disabled"},
			  "messages": [{"role": "user", "content": "thanks"}]
			}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewServer(t, modeltest.Turn{Text: "ok"})
			m := newModel(t, srv.URL, tt.opts)
			req := conversation()
			if tt.req != nil {
				tt.req(req)
			}
			if _, err := run(t.Context(), m, req); err != nil {
				t.Fatal(err)
			}
			bodies := srv.Bodies()
			if len(bodies) != 1 {
				t.Fatalf("got %d requests", len(bodies))
			}
			var got, want any
			if err := json.Unmarshal(bodies[0], &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequestRoundTrip checks that modeltest decodes what the provider
// sends back into the same conversation, so tests can assert on
// messages and bound tools.
func TestRequestRoundTrip(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{Text: "ok"})
	m := newModel(t, srv.URL, func(o *openai.Options) { o.EchoReasoning = true })
	req := conversation()
	if _, err := run(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	got := srv.LastRequest()
	if diff := cmp.Diff([]string{"ls", "noargs"}, modeltest.ToolNames(got)); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
	var want []model.Message
	for _, msg := range req.Messages {
		if msg.Remove {
			continue
		}
		msg.Status = "" // not part of the wire format
		msg.Name = ""
		if len(msg.ToolCalls) > 0 {
			calls := append([]model.ToolCall(nil), msg.ToolCalls...)
			for i := range calls {
				if len(calls[i].Arguments) == 0 {
					calls[i].Arguments = json.RawMessage("{}")
				}
			}
			msg.ToolCalls = calls
		}
		want = append(want, msg)
	}
	raw := cmp.Transformer("raw", func(r json.RawMessage) string { return string(r) })
	if diff := cmp.Diff(want, got.Messages, raw); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}
