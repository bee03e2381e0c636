package modeltest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

var raw = cmp.Transformer("raw", func(r json.RawMessage) string { return string(r) })

func user(text string) *model.Request {
	return &model.Request{Messages: []model.Message{model.UserText(text)},
		Tools: []model.ToolDefinition{{Name: "ls"}, {Name: "echo"}}}
}

func TestTurnsInOrderThenExhausted(t *testing.T) {
	m := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls"}, {Name: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}}},
		modeltest.Turn{Text: "done"},
	)
	r1, err := model.Collect(t.Context(), m, user("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.ToolCall{
		{ID: "call_1_0", Name: "ls", Arguments: json.RawMessage(`{}`)},
		{ID: "call_1_1", Name: "echo", Arguments: json.RawMessage(`{"text":"x"}`)},
	}
	if diff := cmp.Diff(want, r1.Message.ToolCalls, raw); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if r1.FinishReason != model.FinishToolCalls {
		t.Errorf("finish = %q", r1.FinishReason)
	}
	r2, err := model.Collect(t.Context(), m, user("again"), nil)
	if err != nil || r2.Message.Content != "done" || r2.FinishReason != model.FinishStop {
		t.Fatalf("second turn: %+v, %v", r2, err)
	}
	if _, err := model.Collect(t.Context(), m, user("more"), nil); err == nil {
		t.Fatal("third call succeeded on a two-turn script")
	}
	if got := m.Calls(); got != 3 {
		t.Errorf("Calls = %d", got)
	}
	reqs := m.Requests()
	if len(reqs) != 3 || reqs[1].Messages[0].Content != "again" {
		t.Errorf("requests not recorded in order: %+v", reqs)
	}
	if diff := cmp.Diff([]string{"ls", "echo"}, modeltest.ToolNames(reqs[0])); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
}

func TestFuncReactsToToolResults(t *testing.T) {
	m := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "c1", Name: "ls"}}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			last := modeltest.LastMessage(req)
			return modeltest.Turn{Text: fmt.Sprintf("%s answered %q", last.ToolCallID, last.Content)}
		}},
	)
	req := user("list")
	r1, err := model.Collect(t.Context(), m, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, r1.Message,
		model.Message{Role: model.RoleTool, ToolCallID: "c1", Content: "a.txt"})
	r2, err := model.Collect(t.Context(), m, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `c1 answered "a.txt"`; r2.Message.Content != want {
		t.Errorf("content = %q, want %q", r2.Message.Content, want)
	}
}

func TestRules(t *testing.T) {
	s, err := modeltest.ParseScript([]byte(`{
	  "rules": [
	    {"last_role": "user", "contains": "nothing", "reply": {"text": "ok"}},
	    {"last_role": "user", "tool": "echo", "reply": {"tool_calls": [{"name": "echo", "arguments": {"text": "{last}"}}]}},
	    {"last_role": "tool", "reply": {"text": "tool said: {last}"}}
	  ]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	m := modeltest.FromScript(s)
	tests := []struct {
		name      string
		req       *model.Request
		wantText  string
		wantCalls []model.ToolCall
		wantErr   bool
	}{
		{name: "contains", req: user("do nothing"), wantText: "ok"},
		{name: "user with tool bound", req: user(`say "hi"`),
			wantCalls: []model.ToolCall{{ID: "call_2_0", Name: "echo", Arguments: json.RawMessage(`{"text": "say \"hi\""}`)}}},
		{name: "tool result", req: &model.Request{Messages: []model.Message{{Role: model.RoleTool, Content: "pong"}}},
			wantText: "tool said: pong"},
		{name: "user without the tool", req: &model.Request{Messages: []model.Message{model.UserText("x")}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := model.Collect(t.Context(), m, tt.req, nil)
			if tt.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != tt.wantText {
				t.Errorf("text = %q, want %q", resp.Message.Content, tt.wantText)
			}
			if diff := cmp.Diff(tt.wantCalls, resp.Message.ToolCalls, raw); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name       string
		turn       modeltest.Turn
		wantStatus int
		wantEOF    bool
		wantEvents int
	}{
		{name: "status", turn: modeltest.Turn{Status: 500, Error: "boom"}, wantStatus: 500},
		{name: "mid-stream", turn: modeltest.Turn{Text: "abcdef", Error: "boom"}, wantEvents: 2},
		{name: "disconnect", turn: modeltest.Turn{Text: "abcdef", Disconnect: true}, wantEOF: true, wantEvents: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := modeltest.FromScript(modeltest.Script{Turns: []modeltest.Turn{tt.turn}, ChunkSize: 3})
			n := 0
			var got error
			for _, err := range m.Generate(t.Context(), user("hi")) {
				if err != nil {
					got = err
					break
				}
				n++
			}
			var pe *model.ProviderError
			if !errors.As(got, &pe) {
				t.Fatalf("error %v is not a *model.ProviderError", got)
			}
			if pe.StatusCode != tt.wantStatus || errors.Is(got, io.ErrUnexpectedEOF) != tt.wantEOF || n != tt.wantEvents {
				t.Errorf("status %d, EOF %v, %d events before the error", pe.StatusCode, errors.Is(got, io.ErrUnexpectedEOF), n)
			}
		})
	}
}

func TestDelayHonoursCancellation(t *testing.T) {
	m := modeltest.New(modeltest.Turn{Text: "late", Delay: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := model.Collect(ctx, m, user("hi"), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	const n = 50
	turns := make([]modeltest.Turn, n)
	for i := range turns {
		turns[i] = modeltest.Turn{Text: fmt.Sprint(i)}
	}
	m := modeltest.New(turns...)
	var wg sync.WaitGroup
	seen := make([]bool, n)
	var mu sync.Mutex
	for range n {
		wg.Go(func() {
			resp, err := model.Collect(t.Context(), m, user("hi"), nil)
			if err != nil {
				t.Error(err)
				return
			}
			var i int
			fmt.Sscan(resp.Message.Content, &i)
			mu.Lock()
			seen[i] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	for i, ok := range seen {
		if !ok {
			t.Errorf("turn %d never played", i)
		}
	}
	if m.Remaining() != 0 || len(m.Requests()) != n {
		t.Errorf("remaining %d, %d requests recorded", m.Remaining(), len(m.Requests()))
	}
}

func TestScriptJSON(t *testing.T) {
	s, err := modeltest.ParseScript([]byte(`{
	  "turns": [
	    {"text": "hi", "delay": "150ms", "chunk_delay": 5,
	     "tool_calls": [{"id": "a", "name": "ls", "arguments": "{\"path\":\"/\"}"}, {"name": "glob"}]},
	    {"status": 429, "error": "slow down"}
	  ],
	  "loop": true, "chunk_size": 4, "no_record": true, "api_key": "k"
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := modeltest.Script{
		Turns: []modeltest.Turn{
			{Text: "hi", Delay: 150 * time.Millisecond, ChunkDelay: 5 * time.Millisecond, ToolCalls: []model.ToolCall{
				{ID: "a", Name: "ls", Arguments: json.RawMessage(`{"path":"/"}`)},
				{Name: "glob", Arguments: json.RawMessage(`{}`)},
			}},
			{Status: 429, Error: "slow down"},
		},
		Loop: true, ChunkSize: 4, NoRecord: true, APIKey: "k",
	}
	ignoreFunc := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Func" }, cmp.Ignore())
	if diff := cmp.Diff(want, s, raw, ignoreFunc); diff != "" {
		t.Errorf("script (-want +got):\n%s", diff)
	}
	// Round trip.
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := modeltest.ParseScript(b)
	if err != nil {
		t.Fatalf("re-parse %s: %v", b, err)
	}
	if diff := cmp.Diff(s, s2, raw, ignoreFunc); diff != "" {
		t.Errorf("round trip (-first +second):\n%s", diff)
	}
	if _, err := modeltest.ParseScript([]byte(`{"turns": [{"txt": "typo"}]}`)); err == nil {
		t.Error("unknown key accepted")
	}
}

func TestLoopAndNoRecord(t *testing.T) {
	m := modeltest.FromScript(modeltest.Script{Turns: []modeltest.Turn{{Text: "a"}, {Text: "b"}}, Loop: true, NoRecord: true})
	var got []string
	for range 5 {
		resp, err := model.Collect(t.Context(), m, user("x"), nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.Message.Content)
	}
	if diff := cmp.Diff([]string{"a", "b", "a", "b", "a"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(m.Requests()) != 0 {
		t.Error("requests recorded with NoRecord")
	}
}

func BenchmarkGenerate(b *testing.B) {
	m := modeltest.FromScript(modeltest.Script{Loop: true, NoRecord: true, Turns: []modeltest.Turn{
		{ToolCalls: []model.ToolCall{{ID: "c", Name: "ls", Arguments: json.RawMessage(`{"path":"/"}`)}}},
		{Text: "done"},
	}})
	req := user("hi")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := model.Collect(ctx, m, req, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// In process, a turn's finish reason is reported as the wire's
// finish_reason in Response.Metadata, as a chat-completions provider
// reports it: a scripted content_filter with tool calls stays visible.
func TestFinishReasonInMetadata(t *testing.T) {
	m := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls"}}, FinishReason: "content_filter"},
		modeltest.Turn{Text: "done"},
	)
	for _, want := range []string{"content_filter", "stop"} {
		r, err := model.Collect(t.Context(), m, user("hi"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Metadata[model.MetaFinishReason]; got != want {
			t.Errorf("Metadata[finish_reason] = %v, want %q", got, want)
		}
	}
}
