package openai_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/openai"
)

// replay is a chat-completions endpoint that answers the n-th request
// with the n-th answer (the last one repeats) and records the bodies. An
// answer starting with "{" is sent as a JSON completion, any other as
// SSE data lines, one per line of the answer.
type replay struct {
	answers []string

	mu     sync.Mutex
	bodies []map[string]any
}

func (r *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	r.mu.Lock()
	n := len(r.bodies)
	r.bodies = append(r.bodies, body)
	r.mu.Unlock()
	if req.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, req)
		return
	}
	answer := r.answers[min(n, len(r.answers)-1)]
	if strings.HasPrefix(answer, "{") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, line := range strings.Split(strings.TrimSpace(answer), "\n") {
		fmt.Fprintf(w, "data: %s\n\n", strings.TrimSpace(line))
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (r *replay) body(t *testing.T, i int) map[string]any {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= len(r.bodies) {
		t.Fatalf("request %d was not made (%d made)", i, len(r.bodies))
	}
	return r.bodies[i]
}

func startReplay(t *testing.T, answers ...string) (*replay, string) {
	t.Helper()
	r := &replay{answers: answers}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL + "/v1"
}

func reasoningText(evs []model.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(ev.ReasoningDelta)
	}
	return b.String()
}

func textOfEvents(evs []model.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(ev.TextDelta)
	}
	return b.String()
}

var rawJSON = cmp.Transformer("raw", func(r json.RawMessage) string { return string(r) })

// MiniMax with reasoning_split streams its reasoning as reasoning_details
// items; the fragments are joined as sent.
const miniMaxSplitStream = `
{"id":"0","object":"chat.completion.chunk","created":1,"model":"MiniMax-M2.7","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_details":[{"type":"reasoning.text","id":"reasoning-text-1","format":"MiniMax-response-v1","index":0,"text":"The user"}]}}]}
{"id":"0","object":"chat.completion.chunk","created":1,"model":"MiniMax-M2.7","choices":[{"index":0,"delta":{"content":"","reasoning_details":[{"type":"reasoning.text","id":"reasoning-text-1","format":"MiniMax-response-v1","index":0,"text":" says hi."}]}}]}
{"id":"0","object":"chat.completion.chunk","created":1,"model":"MiniMax-M2.7","choices":[{"index":0,"delta":{"content":"Hello!"}}]}
{"id":"0","object":"chat.completion.chunk","created":1,"model":"MiniMax-M2.7","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}
`

// Without reasoning_split the reasoning is inline in the content.
const miniMaxInlineStream = `
{"id":"0","object":"chat.completion.chunk","created":1,"model":"MiniMax-M2.7","choices":[{"index":0,"delta":{"role":"assistant","content":"<think>\nThe user says hi.\n"}}]}
{"id":"0","object":"chat.completion.chunk","created":1,"model":"MiniMax-M2.7","choices":[{"index":0,"delta":{"content":"</think>\n\nHello!"}}]}
{"id":"0","object":"chat.completion.chunk","created":1,"model":"MiniMax-M2.7","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}
`

func TestMiniMaxReasoning(t *testing.T) {
	tests := []struct {
		name          string
		stream        string
		opts          func(*openai.Options)
		wantText      string
		wantReasoning string // of the final message
		wantDeltas    string // reasoning deltas streamed
	}{
		{"reasoning_details deltas", miniMaxSplitStream,
			func(o *openai.Options) { o.ReasoningDetails, o.ThinkTags = true, true },
			"Hello!", "The user says hi.", "The user says hi."},
		{"inline think tags", miniMaxInlineStream,
			func(o *openai.Options) { o.ReasoningDetails, o.ThinkTags = true, true },
			"Hello!", "The user says hi.", ""},
		{"plain OpenAI provider ignores both", miniMaxSplitStream, nil,
			"Hello!", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url := startReplay(t, tt.stream)
			evs, err := run(t.Context(), newModel(t, url, tt.opts), hello())
			if err != nil {
				t.Fatal(err)
			}
			resp := final(t, evs)
			if resp.Message.Content != tt.wantText {
				t.Errorf("content = %q, want %q", resp.Message.Content, tt.wantText)
			}
			if resp.Message.Reasoning != tt.wantReasoning {
				t.Errorf("reasoning = %q, want %q", resp.Message.Reasoning, tt.wantReasoning)
			}
			if got := reasoningText(evs); got != tt.wantDeltas {
				t.Errorf("reasoning deltas = %q, want %q", got, tt.wantDeltas)
			}
		})
	}
}

// TestThoughtSignatureRoundTrip replays Gemini behind an OpenAI-compatible
// gateway: a tool call carries thought_signature (or thoughtSignature),
// and the next request sends it back on that call.
func TestThoughtSignatureRoundTrip(t *testing.T) {
	for _, key := range []string{"thought_signature", "thoughtSignature"} {
		t.Run(key, func(t *testing.T) {
			stream := `
{"id":"g","object":"chat.completion.chunk","created":1,"model":"google/gemini-2.5-pro","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_ls","type":"function","` + key + `":"c2lnLTE=","function":{"name":"ls","arguments":"{\"path\":\"/mnt/user-data\"}"}}]}}]}
{"id":"g","object":"chat.completion.chunk","created":1,"model":"google/gemini-2.5-pro","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}
`
			rec, url := startReplay(t, stream)
			m := newModel(t, url, nil)
			evs, err := run(t.Context(), m, hello())
			if err != nil {
				t.Fatal(err)
			}
			msg := final(t, evs).Message
			want := []model.ToolCall{{ID: "call_ls", Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt/user-data"}`), Signature: "c2lnLTE="}}
			if diff := cmp.Diff(want, msg.ToolCalls, rawJSON); diff != "" {
				t.Fatalf("tool calls (-want +got):\n%s", diff)
			}

			req := hello()
			req.Messages = append(req.Messages, msg,
				model.Message{Role: model.RoleTool, ToolCallID: "call_ls", Name: "ls", Content: "uploads"})
			if _, err := run(t.Context(), m, req); err != nil {
				t.Fatal(err)
			}
			msgs := rec.body(t, 1)["messages"].([]any)
			call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
			if call["thought_signature"] != "c2lnLTE=" {
				t.Errorf("echoed call = %v, want thought_signature c2lnLTE=", call)
			}
		})
	}
}

// TestReasoningFieldsOfCompatibleServers covers the reasoning fields
// StepFun (reasoning by default, reasoning_content with
// reasoning_format deepseek-style) and MiMo (reasoning_content) stream,
// and their replay on the next turn with EchoReasoning.
func TestReasoningFieldsOfCompatibleServers(t *testing.T) {
	for _, field := range []string{"reasoning", "reasoning_content"} {
		t.Run(field, func(t *testing.T) {
			stream := `
{"id":"s","object":"chat.completion.chunk","created":1,"model":"step-3.7-flash","choices":[{"index":0,"delta":{"role":"assistant","` + field + `":"Need the listing."}}]}
{"id":"s","object":"chat.completion.chunk","created":1,"model":"step-3.7-flash","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"ls","arguments":"{}"}}]}}]}
{"id":"s","object":"chat.completion.chunk","created":1,"model":"step-3.7-flash","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}
`
			rec, url := startReplay(t, stream)
			m := newModel(t, url, func(o *openai.Options) { o.EchoReasoning = true })
			evs, err := run(t.Context(), m, hello())
			if err != nil {
				t.Fatal(err)
			}
			msg := final(t, evs).Message
			if msg.Reasoning != "Need the listing." {
				t.Fatalf("reasoning = %q", msg.Reasoning)
			}
			req := hello()
			req.Messages = append(req.Messages, msg, model.Message{Role: model.RoleTool, ToolCallID: "call_1", Content: "a"})
			if _, err := run(t.Context(), m, req); err != nil {
				t.Fatal(err)
			}
			assistant := rec.body(t, 1)["messages"].([]any)[2].(map[string]any)
			if assistant["reasoning_content"] != "Need the listing." {
				t.Errorf("replayed assistant message = %v, want reasoning_content", assistant)
			}
		})
	}
}

// A MindIE completion (not streamed) whose tool call is written as text,
// with the gateway's over-escaped newlines.
const mindIEWhole = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"Qwen3-Coder-480B-A35B-Instruct-Client","choices":[{"index":0,"message":{"role":"assistant","content":"I will list it.\\n<tool_call> <function=ls> <parameter=path>/mnt/user-data/workspace</parameter> </function> </tool_call>","tool_calls":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":20,"total_tokens":50}}`

func TestMindIE(t *testing.T) {
	t.Run("with tools: not streamed, text tool calls", func(t *testing.T) {
		rec, url := startReplay(t, mindIEWhole)
		m := newModel(t, url, func(o *openai.Options) { o.TextToolCalls = true })
		req := conversation()
		evs, err := run(t.Context(), m, req)
		if err != nil {
			t.Fatal(err)
		}
		resp := final(t, evs)
		if got := textOfEvents(evs); got != "I will list it." || resp.Message.Content != got {
			t.Errorf("text = %q, content = %q", got, resp.Message.Content)
		}
		if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "ls" ||
			string(resp.Message.ToolCalls[0].Arguments) != `{"path":"/mnt/user-data/workspace"}` {
			t.Errorf("tool calls = %+v", resp.Message.ToolCalls)
		}
		if resp.FinishReason != model.FinishToolCalls || resp.Usage.TotalTokens != 50 {
			t.Errorf("finish = %q, usage = %+v", resp.FinishReason, resp.Usage)
		}
		body := rec.body(t, 0)
		if s, _ := body["stream"].(bool); s {
			t.Error("a request with tools was streamed")
		}
		if _, ok := body["stream_options"]; ok {
			t.Error("stream_options sent without streaming")
		}
		if _, ok := body["tools"]; !ok {
			t.Error("tools not bound")
		}
		for i, raw := range body["messages"].([]any) {
			msg := raw.(map[string]any)
			if msg["role"] == "tool" || msg["tool_calls"] != nil {
				t.Errorf("message %d is not plain text: %v", i, msg)
			}
			if _, ok := msg["content"].(string); !ok {
				t.Errorf("message %d content is not a string: %v", i, msg["content"])
			}
		}
	})
	t.Run("without tools: streamed, newlines decoded", func(t *testing.T) {
		stream := `
{"id":"c","object":"chat.completion.chunk","created":1,"model":"q","choices":[{"index":0,"delta":{"role":"assistant","content":"a\\nb"}}]}
{"id":"c","object":"chat.completion.chunk","created":1,"model":"q","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}
`
		rec, url := startReplay(t, stream)
		m := newModel(t, url, func(o *openai.Options) { o.TextToolCalls = true })
		evs, err := run(t.Context(), m, hello())
		if err != nil {
			t.Fatal(err)
		}
		if got := final(t, evs).Message.Content; got != "a\nb" {
			t.Errorf("content = %q", got)
		}
		if s, _ := rec.body(t, 0)["stream"].(bool); !s {
			t.Error("a request without tools was not streamed")
		}
	})
}
