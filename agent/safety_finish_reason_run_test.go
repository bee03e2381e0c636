package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/tool"
)

// recordingWrite is a write_file tool that records its calls.
type recordingWrite struct {
	mu    sync.Mutex
	calls []string
}

func (w *recordingWrite) tool() *tool.Tool {
	return handlerTool("write_file", func(_ context.Context, _ *tool.Call, args json.RawMessage) (*tool.Result, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.calls = append(w.calls, string(args))
		return tool.Text("OK"), nil
	})
}

func (w *recordingWrite) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.calls)
}

// safetyLoop runs one turn of an agent whose model plays turns, with the
// safety guard (DeerFlow's defaults) when guarded.
func safetyLoop(t *testing.T, guarded bool, turns ...modeltest.Turn) (*agent.Outcome, []agent.Event, *recordingWrite) {
	t.Helper()
	w := &recordingWrite{}
	opts := agent.Options{Model: modeltest.New(turns...), Tools: []*tool.Tool{w.tool()}}
	if guarded {
		opts.ModelMiddlewares = []tool.ModelMiddleware{agent.SafetyFinishReason(agent.SafetyFinishReasonOptions{})}
	}
	var evs []agent.Event
	out, err := newAgent(t, opts).Invoke(t.Context(), agent.Input{ThreadID: "safety-thread",
		Messages: []model.Message{model.UserText("write me a report")}}, func(ev agent.Event) { evs = append(evs, ev) })
	if err != nil {
		t.Fatal(err)
	}
	return out, evs, w
}

func lastAssistant(t *testing.T, out *agent.Outcome) model.Message {
	t.Helper()
	for i := len(out.State.Messages) - 1; i >= 0; i-- {
		if m := out.State.Messages[i]; m.Role == model.RoleAssistant {
			return m
		}
	}
	t.Fatal("no assistant message")
	return model.Message{}
}

var cutWrite = modeltest.Turn{
	Text: "Here is the report:\n# Weekly Politics\n- Meeting time: 2026-05-12—",
	ToolCalls: []model.ToolCall{{ID: "call_truncated_1", Name: "write_file",
		Arguments: json.RawMessage(`{"path":"/mnt/user-data/outputs/report.md","content":"# Weekly Politics\n- Meeting time: 2026-05-12—"}`)}},
	FinishReason: "content_filter",
}

// A content_filter response with a write_file call: the tool never runs,
// the stored answer has no calls, says why and keeps its text, and the
// run stops as safety_capped after one model call.
func TestSafetyFinishReason_cutToolCallNeverRuns(t *testing.T) {
	out, evs, w := safetyLoop(t, true, cutWrite, modeltest.Turn{Text: "ack"})
	if w.count() != 0 {
		t.Fatalf("write_file ran: %v", w.calls)
	}
	m := lastAssistant(t, out)
	rec, _ := m.Meta["safety_termination"].(map[string]any)
	if len(m.ToolCalls) != 0 || rec["detector"] != "openai_compatible_content_filter" || rec["suppressed_tool_call_count"] != 1 ||
		!strings.Contains(m.Content, "safety-related signal") || !strings.Contains(m.Content, "Weekly Politics") {
		t.Errorf("final message = %+v", m)
	}
	if out.Reason != agent.StopSafetyCapped || out.Turns != 1 {
		t.Errorf("reason %q after %d turns, want safety_capped after 1", out.Reason, out.Turns)
	}
	var got []any
	for _, ev := range evs {
		if ev.Type == agent.SafetyTerminationEvent {
			got = append(got, ev.Data)
		}
		if ev.Type == agent.EventToolStart {
			t.Errorf("a tool started: %+v", ev)
		}
	}
	want := []any{map[string]any{"detector": "openai_compatible_content_filter", "reason_field": "finish_reason",
		"reason_value": "content_filter", "suppressed_tool_call_count": 1, "suppressed_tool_call_names": []string{"write_file"},
		"thread_id": "safety-thread"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("safety_termination events (-want +got):\n%s", diff)
	}
}

// Without the guard (enabled: false) the same call runs.
func TestSafetyFinishReason_unguardedCallRuns(t *testing.T) {
	out, _, w := safetyLoop(t, false, cutWrite, modeltest.Turn{Text: "ack"})
	if w.count() != 1 || out.Reason != agent.StopCompleted {
		t.Errorf("write_file ran %d times, reason %q", w.count(), out.Reason)
	}
}

// Text with no calls under content_filter is the user's partial answer:
// delivered unchanged, no record.
func TestSafetyFinishReason_textWithoutCallsUnchanged(t *testing.T) {
	out, _, _ := safetyLoop(t, true, modeltest.Turn{Text: "Partial answer truncated by safety filter", FinishReason: "content_filter"})
	m := lastAssistant(t, out)
	if _, ok := m.Meta["safety_termination"]; ok || m.Content != "Partial answer truncated by safety filter" || out.Reason != agent.StopCompleted {
		t.Errorf("message %+v, reason %q", m, out.Reason)
	}
}

// An empty content_filter answer is never stored empty.
func TestSafetyFinishReason_emptyAnswerBackfilled(t *testing.T) {
	out, _, _ := safetyLoop(t, true, modeltest.Turn{FinishReason: "content_filter"})
	m := lastAssistant(t, out)
	rec, _ := m.Meta["safety_termination"].(map[string]any)
	if !strings.Contains(m.Content, "returned no content") || rec["suppressed_tool_call_count"] != 0 {
		t.Errorf("message %+v", m)
	}
}

// A healthy tool_calls response still runs its tool.
func TestSafetyFinishReason_healthyCallRuns(t *testing.T) {
	ok := modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "call_ok", Name: "write_file",
		Arguments: json.RawMessage(`{"path":"/tmp/ok","content":"complete content"}`)}}}
	_, _, w := safetyLoop(t, true, ok, modeltest.Turn{Text: "done"})
	if diff := cmp.Diff([]string{`{"path":"/tmp/ok","content":"complete content"}`}, w.calls); diff != "" {
		t.Errorf("write_file calls (-want +got):\n%s", diff)
	}
}
