package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/model/openai"
)

func newModel(t testing.TB, baseURL string, edit func(*openai.Options)) *openai.Model {
	t.Helper()
	opts := openai.Options{
		Name: "test-model", ConfigKey: "models[0]", Model: "gpt-test",
		APIKey: "modeltest", BaseURL: baseURL, MaxRetries: -1,
	}
	if edit != nil {
		edit(&opts)
	}
	m, err := openai.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// run collects every event and the final error of one Generate.
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

func final(t *testing.T, evs []model.Event) *model.Response {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Response == nil {
		t.Fatalf("last event is not a response: %+v", evs)
	}
	return evs[len(evs)-1].Response
}

func hello() *model.Request {
	return &model.Request{Messages: []model.Message{model.SystemText("be brief"), model.UserText("hi")}}
}

func TestGenerateAgainstModeltest(t *testing.T) {
	usage := &model.Usage{InputTokens: 11, OutputTokens: 7, TotalTokens: 18}
	tests := []struct {
		name          string
		turn          modeltest.Turn
		wantText      string
		wantReasoning string
		wantCalls     []model.ToolCall
		wantFinish    model.FinishReason
		minDeltas     int // text deltas expected at least
	}{
		{
			name:       "streamed text",
			turn:       modeltest.Turn{Text: "Hello from the scripted model.", Usage: usage},
			wantText:   "Hello from the scripted model.",
			wantFinish: model.FinishStop,
			minDeltas:  5,
		},
		{
			name: "parallel tool calls",
			turn: modeltest.Turn{Usage: usage, ToolCalls: []model.ToolCall{
				{ID: "call_a", Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt/user-data/workspace"}`)},
				{ID: "call_b", Name: "read_file", Arguments: json.RawMessage(`{"path":"/mnt/user-data/uploads/a.txt","start_line":1}`)},
			}},
			wantCalls: []model.ToolCall{
				{ID: "call_a", Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt/user-data/workspace"}`)},
				{ID: "call_b", Name: "read_file", Arguments: json.RawMessage(`{"path":"/mnt/user-data/uploads/a.txt","start_line":1}`)},
			},
			wantFinish: model.FinishToolCalls,
		},
		{
			name: "text then tool call",
			turn: modeltest.Turn{Text: "Let me look.", Usage: usage, ToolCalls: []model.ToolCall{
				{ID: "call_1", Name: "ls", Arguments: json.RawMessage(`{}`)},
			}},
			wantText:   "Let me look.",
			wantCalls:  []model.ToolCall{{ID: "call_1", Name: "ls", Arguments: json.RawMessage(`{}`)}},
			wantFinish: model.FinishToolCalls,
			minDeltas:  2,
		},
		{
			name:          "reasoning passthrough",
			turn:          modeltest.Turn{Reasoning: "The user greets me.", Text: "Hi!", Usage: usage},
			wantText:      "Hi!",
			wantReasoning: "The user greets me.",
			wantFinish:    model.FinishStop,
		},
		{
			name:       "length finish",
			turn:       modeltest.Turn{Text: "cut", FinishReason: model.FinishLength, Usage: usage},
			wantText:   "cut",
			wantFinish: model.FinishLength,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewScriptServer(t, modeltest.Script{Turns: []modeltest.Turn{tt.turn}, ChunkSize: 6})
			m := newModel(t, srv.URL, nil)
			evs, err := run(t.Context(), m, hello())
			if err != nil {
				t.Fatal(err)
			}
			resp := final(t, evs)

			var text, reasoning strings.Builder
			deltas := 0
			argsByIndex := map[int]string{}
			namesByIndex := map[int]string{}
			for _, ev := range evs {
				text.WriteString(ev.TextDelta)
				reasoning.WriteString(ev.ReasoningDelta)
				if ev.TextDelta != "" {
					deltas++
				}
				if d := ev.ToolCallDelta; d != nil {
					argsByIndex[d.Index] += d.Arguments
					namesByIndex[d.Index] += d.Name
				}
			}
			if deltas < tt.minDeltas {
				t.Errorf("got %d text deltas, want at least %d", deltas, tt.minDeltas)
			}
			if got := text.String(); got != tt.wantText || resp.Message.Content != tt.wantText {
				t.Errorf("text: deltas %q, response %q, want %q", got, resp.Message.Content, tt.wantText)
			}
			if got := reasoning.String(); got != tt.wantReasoning || resp.Message.Reasoning != tt.wantReasoning {
				t.Errorf("reasoning: deltas %q, response %q, want %q", got, resp.Message.Reasoning, tt.wantReasoning)
			}
			if diff := cmp.Diff(tt.wantCalls, resp.Message.ToolCalls, cmp.Transformer("raw", func(r json.RawMessage) string { return string(r) })); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			for i, tc := range tt.wantCalls {
				if argsByIndex[i] != string(tc.Arguments) || namesByIndex[i] != tc.Name {
					t.Errorf("deltas for index %d: name %q args %q, want %q %s", i, namesByIndex[i], argsByIndex[i], tc.Name, tc.Arguments)
				}
			}
			if resp.FinishReason != tt.wantFinish {
				t.Errorf("finish = %q, want %q", resp.FinishReason, tt.wantFinish)
			}
			if diff := cmp.Diff(*usage, resp.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if resp.Message.Usage == nil || *resp.Message.Usage != *usage {
				t.Errorf("message usage = %+v", resp.Message.Usage)
			}
			if resp.Message.Role != model.RoleAssistant {
				t.Errorf("role = %q", resp.Message.Role)
			}
		})
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name       string
		turn       modeltest.Turn
		wantStatus int
		wantText   []string // substrings of the error text
		wantDeltas bool     // some text arrived before the error
	}{
		{
			name:       "rate limited",
			turn:       modeltest.Turn{Status: http.StatusTooManyRequests, Error: "Rate limit reached"},
			wantStatus: 429,
			wantText:   []string{`model "test-model" (openai)`, "HTTP 429 Too Many Requests", "Rate limit reached"},
		},
		{
			name:       "unauthorized",
			turn:       modeltest.Turn{Status: http.StatusUnauthorized, Error: "Incorrect API key provided."},
			wantStatus: 401,
			wantText:   []string{`model "test-model"`, "HTTP 401", "check api_key or OPENAI_API_KEY"},
		},
		{
			name:       "error mid-stream",
			turn:       modeltest.Turn{Text: "partial answer", Error: "upstream overloaded"},
			wantText:   []string{`model "test-model" (openai): error while streaming: upstream overloaded`},
			wantDeltas: true,
		},
		{
			name:       "connection dropped mid-stream",
			turn:       modeltest.Turn{Text: "partial answer", Disconnect: true},
			wantText:   []string{`model "test-model"`},
			wantDeltas: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewScriptServer(t, modeltest.Script{Turns: []modeltest.Turn{tt.turn}, ChunkSize: 4})
			m := newModel(t, srv.URL, nil)
			evs, err := run(t.Context(), m, hello())
			if err == nil {
				t.Fatalf("no error; events %+v", evs)
			}
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
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if got := len(evs) > 0; got != tt.wantDeltas {
				t.Errorf("events before the error: %d", len(evs))
			}
		})
	}
}

func TestMissingAPIKey(t *testing.T) {
	m, err := openai.New(openai.Options{
		Name: "gpt-4o", ConfigKey: "models[0]", Model: "gpt-4o",
		Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatalf("New must not fail without a key: %v", err)
	}
	_, err = run(t.Context(), m, hello())
	want := `model "gpt-4o" (openai): no API key; set OPENAI_API_KEY or api_key in models[0]`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestAPIKeyAndBaseURLFromEnvironment(t *testing.T) {
	srv := modeltest.NewScriptServer(t, modeltest.Script{APIKey: "sk-env", Turns: []modeltest.Turn{{Text: "ok"}}})
	env := map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": srv.URL}
	m, err := openai.New(openai.Options{Name: "default", Model: "gpt-4o", MaxRetries: -1,
		Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if m.BaseURL() != srv.URL {
		t.Errorf("BaseURL = %q, want %q", m.BaseURL(), srv.URL)
	}
	evs, err := run(t.Context(), m, hello())
	if err != nil {
		t.Fatal(err)
	}
	if got := final(t, evs).Message.Content; got != "ok" {
		t.Errorf("content = %q", got)
	}
}

func TestUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m := newModel(t, "http://"+addr+"/v1", nil)
	_, err = run(t.Context(), m, hello())
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{`model "test-model"`, "cannot reach http://" + addr + "/v1", "check base_url or OPENAI_BASE_URL"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

func TestCancellation(t *testing.T) {
	t.Run("while waiting for the first token", func(t *testing.T) {
		srv := modeltest.NewServer(t, modeltest.Turn{Text: "late", Delay: time.Minute})
		m := newModel(t, srv.URL, nil)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := run(ctx, m, hello())
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want context.Canceled", err)
		}
	})
	t.Run("breaking out of the stream", func(t *testing.T) {
		srv := modeltest.NewScriptServer(t, modeltest.Script{ChunkSize: 1,
			Turns: []modeltest.Turn{{Text: "a long answer", ChunkDelay: 20 * time.Millisecond}}})
		m := newModel(t, srv.URL, nil)
		n := 0
		for ev, err := range m.Generate(t.Context(), hello()) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.TextDelta != "" {
				n++
				break
			}
		}
		if n != 1 {
			t.Fatalf("got %d deltas", n)
		}
	})
}

// TestRepeatedIndexForNewCall checks that a server reusing index 0 for
// every call (as some OpenAI-compatible mocks do) still yields separate
// calls.
func TestRepeatedIndexForNewCall(t *testing.T) {
	chunks := []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"pa"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"/\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"glob","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	m := newModel(t, srv.URL, nil)
	evs, err := run(t.Context(), m, hello())
	if err != nil {
		t.Fatal(err)
	}
	resp := final(t, evs)
	want := []model.ToolCall{
		{ID: "c1", Name: "ls", Arguments: json.RawMessage(`{"path":"/"}`)},
		{ID: "c2", Name: "glob", Arguments: json.RawMessage(`{}`)},
	}
	if diff := cmp.Diff(want, resp.Message.ToolCalls, cmp.Transformer("raw", func(r json.RawMessage) string { return string(r) })); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if resp.FinishReason != model.FinishToolCalls {
		t.Errorf("finish = %q, want tool_calls", resp.FinishReason)
	}
	if resp.Usage != (model.Usage{}) {
		t.Errorf("usage = %+v, want zero when the server sends none", resp.Usage)
	}
}

func TestEmptyStreamIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	_, err := run(t.Context(), newModel(t, srv.URL, nil), hello())
	if err == nil || !strings.Contains(err.Error(), "without a response") {
		t.Fatalf("error = %v", err)
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	for _, u := range []string{"localhost:11434", "ftp://x", "://"} {
		if _, err := openai.New(openai.Options{Model: "m", BaseURL: u}); err == nil {
			t.Errorf("base_url %q accepted", u)
		}
	}
	if _, err := openai.New(openai.Options{BaseURL: "http://127.0.0.1/v1"}); err == nil {
		t.Error("empty model accepted")
	}
}

// The server's finish_reason reaches Response.Metadata as sent, even
// where the normalised FinishReason says tool_calls, and Azure's
// content_filter_results come with it.
func TestFinishReasonKeptAsSentInMetadata(t *testing.T) {
	filtered := `{"hate":{"filtered":true,"severity":"high"}}`
	for _, tc := range []struct {
		name, finish, extra string
		want                map[string]any
	}{
		{"content_filter with a tool call", "content_filter", "", map[string]any{model.MetaFinishReason: "content_filter"}},
		{"a gateway's own token", "SAFETY", "", map[string]any{model.MetaFinishReason: "SAFETY"}},
		{"Azure's filter results", "content_filter", `,"content_filter_results":` + filtered, map[string]any{
			model.MetaFinishReason:         "content_filter",
			model.MetaContentFilterResults: map[string]any{"hate": map[string]any{"filtered": true, "severity": "high"}}}},
		{"no finish_reason", "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := `{"choices":[{"index":0,"delta":{}` + tc.extra + `}]}`
			if tc.finish != "" {
				last = `{"choices":[{"index":0,"delta":{},"finish_reason":"` + tc.finish + `"` + tc.extra + `}]}`
			}
			chunks := []string{
				`{"choices":[{"index":0,"delta":{"role":"assistant","content":"partial","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"write_file","arguments":"{\"pa"}}]}}]}`,
				last,
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, c := range chunks {
					fmt.Fprintf(w, "data: %s\n\n", c)
				}
				fmt.Fprint(w, "data: [DONE]\n\n")
			}))
			t.Cleanup(srv.Close)
			evs, err := run(t.Context(), newModel(t, srv.URL, nil), hello())
			if err != nil {
				t.Fatal(err)
			}
			resp := final(t, evs)
			if diff := cmp.Diff(tc.want, resp.Metadata); diff != "" {
				t.Errorf("Metadata (-want +got):\n%s", diff)
			}
			if resp.FinishReason != model.FinishToolCalls {
				t.Errorf("FinishReason = %q, want the normalised tool_calls", resp.FinishReason)
			}
		})
	}
}
