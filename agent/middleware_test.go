package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// invokeClassified is the loop's path for one call: tool.Invoke, then
// DeerFlow's classification.
func invokeClassified(h tool.Handler) tool.Handler {
	return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		res, err := tool.Invoke(ctx, h, call, args)
		if err != nil {
			return nil, err
		}
		return classified(res), nil
	}
}

func TestToolFailuresBecomeClassifiedResults(t *testing.T) {
	long := strings.Repeat("z", 600)
	for _, tc := range []struct {
		name      string
		h         tool.Handler
		wantText  string
		wantType  any
		wantSrc   string
		wantState string
	}{
		{"error", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return nil, errors.New("connection refused")
		}, "Error: Tool 'web' failed with Error: connection refused. Continue with available context, or choose an alternative tool.", "transient", "exception", "error"},
		{"typed error", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return nil, &fs.PathError{Op: "open", Path: "/x", Err: os.ErrNotExist}
		}, "Error: Tool 'web' failed with PathError: open /x: file does not exist. Continue with available context, or choose an alternative tool.", "not_found", "exception", "error"},
		{"panic", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			panic("index out of range")
		}, "Error: Tool 'web' failed with panic: index out of range. Continue with available context, or choose an alternative tool.", "unknown", "exception", "error"},
		{"long detail", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return nil, errors.New(long)
		}, "Error: Tool 'web' failed with Error: " + strings.Repeat("z", 497) + ".... Continue with available context, or choose an alternative tool.", "unknown", "exception", "error"},
		{"error result", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return tool.Errorf("Permission denied writing to file: /etc/x"), nil
		}, "Error: Permission denied writing to file: /etc/x", "permission", "tool_return", "error"},
		{"json error", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return tool.Text(`{"error": "rate limit exceeded", "query": "401"}`), nil
		}, `{"error": "rate limit exceeded", "query": "401"}`, "rate_limited", "tool_return", "error"},
		{"json error none", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return tool.Text(`{"error": "none", "results": []}`), nil
		}, `{"error": "none", "results": []}`, nil, "content_analysis", "success"},
		{"partial", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return tool.Text("output truncated at 100 lines"), nil
		}, "output truncated at 100 lines", nil, "content_analysis", "partial_success"},
		{"numeric code on a word boundary only", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return tool.Errorf("took 500ms and failed"), nil
		}, "Error: took 500ms and failed", "unknown", "tool_return", "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := invokeClassified(tc.h)(t.Context(), &tool.Call{ID: "c", Name: "web"}, json.RawMessage(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.TextContent(); got != tc.wantText {
				t.Errorf("text:\n got %q\nwant %q", got, tc.wantText)
			}
			meta := res.Meta[ToolMetaKey].(map[string]any)
			if meta["error_type"] != tc.wantType || meta["source"] != tc.wantSrc || meta["status"] != tc.wantState {
				t.Errorf("meta = %v", meta)
			}
		})
	}
	t.Run("cancellation stays a Go error", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := invokeClassified(func(ctx context.Context, _ *tool.Call, _ json.RawMessage) (*tool.Result, error) {
			return nil, ctx.Err()
		})(ctx, &tool.Call{Name: "x"}, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("existing meta kept", func(t *testing.T) {
		res, _ := invokeClassified(func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Meta: map[string]any{ToolMetaKey: "mine"}}, nil
		})(t.Context(), &tool.Call{Name: "x"}, nil)
		if res.Meta[ToolMetaKey] != "mine" {
			t.Errorf("meta = %v", res.Meta)
		}
	})
}

func tc(id, name, args string) model.ToolCall {
	return model.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func summary(msgs []model.Message) []string {
	var out []string
	for _, m := range msgs {
		s := string(m.Role)
		switch m.Role {
		case model.RoleAssistant:
			for _, c := range m.ToolCalls {
				s += fmt.Sprintf(" %s:%s%s", c.ID, c.Name, c.Arguments)
			}
		case model.RoleTool:
			s += fmt.Sprintf(" %s:%s %s", m.ToolCallID, m.Name, m.Content)
			if m.Status != "" {
				s += " (" + m.Status + ")"
			}
		default:
			s += " " + m.Content
		}
		out = append(out, s)
	}
	return out
}

func TestDanglingToolCallRepair(t *testing.T) {
	user := model.UserText("hi")
	for _, tc0 := range []struct {
		name string
		in   []model.Message
		want []string // nil: unchanged
	}{
		{"well formed", []model.Message{user,
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{tc("a", "ls", `{}`), tc("b", "ls", `{}`)}},
			{Role: model.RoleTool, ToolCallID: "b", Name: "ls", Content: "2"},
			{Role: model.RoleTool, ToolCallID: "a", Name: "ls", Content: "1"},
		}, nil},
		{"unanswered call gets a placeholder", []model.Message{user,
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{tc("a", "ls", `{}`), tc("b", "bash", `{}`)}},
			{Role: model.RoleTool, ToolCallID: "a", Name: "ls", Content: "1"},
			model.UserText("next"),
		}, []string{"user hi", "assistant a:ls{} b:bash{}", "tool a:ls 1",
			"tool b:bash " + DanglingInterruptedText + " (error)", "user next"}},
		{"result out of place is moved after its call", []model.Message{user,
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{tc("a", "ls", `{}`)}},
			model.UserText("interjection"),
			{Role: model.RoleTool, ToolCallID: "a", Name: "ls", Content: "1"},
		}, []string{"user hi", "assistant a:ls{}", "tool a:ls 1", "user interjection"}},
		{"orphan dropped", []model.Message{user,
			{Role: model.RoleTool, ToolCallID: "gone", Name: "ls", Content: "old"},
		}, []string{"user hi"}},
		{"empty name and bad arguments sanitised", []model.Message{user,
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{tc("a", " ", `{"x":`)}},
		}, []string{"user hi", "assistant a:unknown_tool{}", "tool a:unknown_tool " + DanglingEmptyNameText + " (error)"}},
		{"missing ids relabelled and paired by position", []model.Message{user,
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{tc("", "bash", `{}`), tc("", "bash", `{}`)}},
			{Role: model.RoleTool, Name: "bash", Content: "one"},
			{Role: model.RoleTool, Name: "bash", Content: "two"},
		}, []string{"user hi", "assistant deerflow_synthetic_tool_call_1_call_0:bash{} deerflow_synthetic_tool_call_1_call_1:bash{}",
			"tool deerflow_synthetic_tool_call_1_call_0:bash one", "tool deerflow_synthetic_tool_call_1_call_1:bash two"}},
	} {
		t.Run(tc0.name, func(t *testing.T) {
			got, _ := RepairToolCalls(tc0.in)
			if tc0.want == nil {
				if got != nil {
					t.Errorf("changed a well-formed history: %v", summary(got))
				}
				return
			}
			if diff := cmp.Diff(tc0.want, summary(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	t.Run("middleware rewrites the request only", func(t *testing.T) {
		msgs := []model.Message{user, {Role: model.RoleAssistant, ToolCalls: []model.ToolCall{tc("a", "ls", `{}`)}}}
		req := &model.Request{Messages: msgs}
		var seen *model.Request
		_, err := DanglingToolCalls()(func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			seen = call.Request
			return &model.Response{}, nil
		})(t.Context(), &tool.ModelCall{Request: req})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen.Messages) != 3 || len(req.Messages) != 2 {
			t.Errorf("seen %d messages, original now %d", len(seen.Messages), len(req.Messages))
		}
	})
}

// loopStep feeds one model response through the detector and returns the
// response and the request the model saw.
func loopStep(t *testing.T, d *LoopDetector, thread string, calls ...model.ToolCall) (*model.Response, *model.Request) {
	t.Helper()
	var seen *model.Request
	resp, err := d.Middleware()(func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
		seen = call.Request
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: calls}, FinishReason: model.FinishToolCalls}, nil
	})(t.Context(), &tool.ModelCall{Request: &model.Request{Messages: []model.Message{model.UserText("x")}}, ThreadID: thread, RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	return resp, seen
}

func TestLoopDetectionWarnsThenStops(t *testing.T) {
	d := NewLoopDetector(config.LoopDetection{Enabled: true}, nil)
	same := tc("c", "web_search", `{"query":"go iter"}`)
	var warnings []string
	for i := 1; i <= 5; i++ {
		resp, req := loopStep(t, d, "t1", same)
		if last := req.Messages[len(req.Messages)-1]; last.Name == LoopWarningName {
			warnings = append(warnings, fmt.Sprintf("before call %d: %s", i, last.Content))
		}
		if i < 5 && len(resp.Message.ToolCalls) != 1 {
			t.Fatalf("call %d stripped early", i)
		}
		if i == 5 {
			if len(resp.Message.ToolCalls) != 0 || resp.Message.Content != LoopHardStopText ||
				resp.Message.Meta["stop_reason"] != "loop_capped" || resp.FinishReason != model.FinishStop {
				t.Errorf("hard stop response = %+v", resp)
			}
		}
	}
	// The warning of the third call reaches the fourth request, once.
	if diff := cmp.Diff([]string{"before call 4: " + LoopWarningText}, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	// Other threads are independent.
	if resp, _ := loopStep(t, d, "t2", same); len(resp.Message.ToolCalls) != 1 {
		t.Error("another thread was stopped")
	}
}

func TestLoopDetectionStableKeys(t *testing.T) {
	for _, tc0 := range []struct {
		name string
		a, b model.ToolCall
		same bool
	}{
		{"argument order", tc("1", "grep", `{"pattern":"x","path":"/a"}`), tc("2", "grep", `{"path":"/a","pattern":"x"}`), true},
		{"non-salient argument ignored", tc("1", "web_search", `{"query":"q","description":"one"}`), tc("2", "web_search", `{"query":"q","description":"two"}`), true},
		{"read_file same bucket", tc("1", "read_file", `{"path":"/f","start_line":1,"end_line":50}`), tc("2", "read_file", `{"path":"/f","start_line":100,"end_line":150}`), true},
		{"read_file other bucket", tc("1", "read_file", `{"path":"/f","start_line":1}`), tc("2", "read_file", `{"path":"/f","start_line":300}`), false},
		{"write_file content matters", tc("1", "write_file", `{"path":"/f","content":"a"}`), tc("2", "write_file", `{"path":"/f","content":"b"}`), false},
	} {
		t.Run(tc0.name, func(t *testing.T) {
			if got := hashToolCalls([]model.ToolCall{tc0.a}) == hashToolCalls([]model.ToolCall{tc0.b}); got != tc0.same {
				t.Errorf("same hash = %v, want %v", got, tc0.same)
			}
		})
	}
	if hashToolCalls([]model.ToolCall{tc("1", "a", `{}`), tc("2", "b", `{}`)}) != hashToolCalls([]model.ToolCall{tc("3", "b", `{}`), tc("4", "a", `{}`)}) {
		t.Error("hash depends on call order")
	}
}

func TestLoopDetectionToolFrequency(t *testing.T) {
	d := NewLoopDetector(config.LoopDetection{ToolFreqWarn: 3, ToolFreqHardLimit: 4,
		ToolFreqOverrides: map[string]config.ToolFreqOverride{"bash": {Warn: 100, HardLimit: 200}}}, nil)
	var texts []string
	for i := range 4 {
		resp, req := loopStep(t, d, "t", tc("c", "read_file", fmt.Sprintf(`{"path":"/f%d"}`, i)))
		if last := req.Messages[len(req.Messages)-1]; last.Name == LoopWarningName {
			texts = append(texts, last.Content)
		}
		if len(resp.Message.ToolCalls) == 0 {
			texts = append(texts, resp.Message.Content)
		}
	}
	want := []string{
		"[LOOP DETECTED] You have called read_file 3 times without producing a final answer. Stop calling tools and produce your final answer now. If you cannot complete the task, summarize what you accomplished so far.",
		"[FORCED STOP] Tool read_file called 4 times — exceeded the per-tool safety limit. Producing final answer with results collected so far.",
	}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for i := range 10 {
		if resp, _ := loopStep(t, d, "t", tc("c", "bash", fmt.Sprintf(`{"command":"echo %d"}`, i))); len(resp.Message.ToolCalls) == 0 {
			t.Fatal("override ignored")
		}
	}
}

func TestLoopDetectionEvictsThreads(t *testing.T) {
	d := NewLoopDetector(config.LoopDetection{MaxTrackedThreads: 2}, nil)
	for i := range 5 {
		loopStep(t, d, fmt.Sprintf("t%d", i), tc("c", "ls", `{}`))
	}
	if n := len(d.threads); n != 2 {
		t.Errorf("tracking %d threads", n)
	}
}
