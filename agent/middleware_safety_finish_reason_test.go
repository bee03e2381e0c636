package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// safetyOut is what one response through the guard gives.
type safetyOut struct {
	resp   *model.Response
	events []string // "type data" of emitted events
	log    string
}

// safetyRun sends in through the guard made with opts, on thread t-1.
func safetyRun(t *testing.T, opts SafetyFinishReasonOptions, in *model.Response) safetyOut {
	t.Helper()
	var out safetyOut
	var logs bytes.Buffer
	call := &tool.ModelCall{Request: &model.Request{}, ThreadID: "t-1", RunID: "r-1",
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Emit:   func(ev string, data any) { out.events = append(out.events, fmt.Sprintf("%s %v", ev, data)) }}
	resp, err := SafetyFinishReason(opts)(func(context.Context, *tool.ModelCall) (*model.Response, error) {
		return in, nil
	})(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	out.resp, out.log = resp, logs.String()
	return out
}

// writeCall is a write_file call cut off by the provider.
func writeCall(i int) model.ToolCall {
	return model.ToolCall{ID: fmt.Sprintf("call_write_%d", i), Name: "write_file",
		Arguments: json.RawMessage(`{"path":"/mnt/user-data/outputs/x.md","content":"半截"}`)}
}

// flagged is a response with text, calls and provider metadata.
func flagged(content string, metadata map[string]any, calls ...model.ToolCall) *model.Response {
	fr := model.FinishStop
	if len(calls) > 0 {
		fr = model.FinishToolCalls
	}
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: content, ToolCalls: calls},
		FinishReason: fr, Metadata: metadata}
}

var contentFilter = map[string]any{"finish_reason": "content_filter"}

func record(t *testing.T, r *model.Response) map[string]any {
	t.Helper()
	rec, ok := r.Message.Meta["safety_termination"].(map[string]any)
	if !ok {
		t.Fatalf("no safety_termination record in %+v", r.Message.Meta)
	}
	return rec
}

// When the guard fires and when it does not (DeerFlow's trigger criteria).
func TestSafetyFinishReason_triggerCriteria(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *model.Response
		want bool
	}{
		{"content_filter with tool calls triggers", flagged("partial", contentFilter, writeCall(1)), true},
		{"content_filter without tool calls passes through", flagged("partial response", contentFilter), false},
		{"content_filter with empty text and no calls backfills", flagged("", contentFilter), true},
		{"content_filter with blank text and no calls backfills", flagged("   \n  ", contentFilter), true},
		{"an Anthropic refusal with empty text backfills", flagged("", map[string]any{"stop_reason": "refusal"}), true},
		{"empty text without a safety signal passes through", flagged("", map[string]any{"finish_reason": "stop"}), false},
		{"normal tool calls pass through", flagged("", map[string]any{"finish_reason": "tool_calls"}, writeCall(1)), false},
		{"tool calls with finish_reason stop pass through", flagged("", map[string]any{"finish_reason": "stop"}, writeCall(1)), false},
		{"no provider metadata passes through", flagged("", nil, writeCall(1)), false},
		{"an Anthropic refusal with tool calls triggers", flagged("", map[string]any{"stop_reason": "refusal"}, writeCall(1)), true},
		{"a Gemini SAFETY with tool calls triggers", flagged("", map[string]any{"finish_reason": "SAFETY"}, writeCall(1)), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := safetyRun(t, SafetyFinishReasonOptions{}, tc.in)
			if !tc.want {
				if out.resp != tc.in || len(out.events) != 0 || out.log != "" {
					t.Errorf("intervened: %+v, events %v, log %q", out.resp, out.events, out.log)
				}
				return
			}
			if out.resp == tc.in || len(out.resp.Message.ToolCalls) != 0 || strings.TrimSpace(out.resp.Message.Content) == "" {
				t.Errorf("not repaired: %+v", out.resp)
			}
		})
	}
}

// An error or a nil response of the model passes through untouched (the
// guard only reads answers).
func TestSafetyFinishReason_errorsPassThrough(t *testing.T) {
	boom := errors.New("boom")
	resp, err := SafetyFinishReason(SafetyFinishReasonOptions{})(func(context.Context, *tool.ModelCall) (*model.Response, error) {
		return nil, boom
	})(t.Context(), &tool.ModelCall{})
	if resp != nil || !errors.Is(err, boom) {
		t.Errorf("%v, %v", resp, err)
	}
}

// DeerFlow's texts, exactly, with Python reprs of the values.
func TestSafetyFinishReason_texts(t *testing.T) {
	out := safetyRun(t, SafetyFinishReasonOptions{}, flagged("", contentFilter, writeCall(1)))
	want := "The model provider stopped this response with a safety-related signal (finish_reason='content_filter', " +
		"detector='openai_compatible_content_filter'). Any tool calls produced in this turn were suppressed because their " +
		"arguments may be truncated and unsafe to execute. Please rephrase the request or ask for a narrower output."
	if out.resp.Message.Content != want {
		t.Errorf("content = %q", out.resp.Message.Content)
	}
	out = safetyRun(t, SafetyFinishReasonOptions{}, flagged("", map[string]any{"stop_reason": "refusal"}))
	want = "The model provider stopped this response with a safety-related signal (stop_reason='refusal', " +
		"detector='anthropic_refusal') and returned no content. Please rephrase your request or start a new conversation."
	if out.resp.Message.Content != want {
		t.Errorf("content = %q", out.resp.Message.Content)
	}
}

// The empty-answer backfill explains without claiming suppressed calls.
func TestSafetyFinishReason_backfillClaimsNoSuppressedCalls(t *testing.T) {
	out := safetyRun(t, SafetyFinishReasonOptions{}, flagged("", contentFilter))
	c := out.resp.Message.Content
	if !strings.Contains(c, "safety-related signal") || !strings.Contains(c, "returned no content") || strings.Contains(c, "were suppressed") {
		t.Errorf("content = %q", c)
	}
	rec := record(t, out.resp)
	if rec["suppressed_tool_call_count"] != 0 || !cmp.Equal(rec["suppressed_tool_call_names"], []string{}) {
		t.Errorf("record = %v", rec)
	}
	if !strings.Contains(out.log, "backfilled_empty_content=True") {
		t.Errorf("log = %q", out.log)
	}
}

// How the repaired message looks (DeerFlow's message rewrite cases).
func TestSafetyFinishReason_rewrite(t *testing.T) {
	t.Run("clears every tool call", func(t *testing.T) {
		out := safetyRun(t, SafetyFinishReasonOptions{}, flagged("", contentFilter, writeCall(1), writeCall(2)))
		if len(out.resp.Message.ToolCalls) != 0 {
			t.Errorf("calls = %v", out.resp.Message.ToolCalls)
		}
	})
	t.Run("clears raw provider call payloads in Meta and keeps the rest", func(t *testing.T) {
		in := flagged("", contentFilter, writeCall(1))
		in.Message.Meta = map[string]any{"tool_calls": []any{"raw"}, "function_call": map[string]any{"name": "write_file"},
			"anthropic_thinking_signature": "sig", "custom_provider_field": map[string]any{"x": 1}}
		in.Message.Reasoning = "thinking text"
		out := safetyRun(t, SafetyFinishReasonOptions{}, in)
		m := out.resp.Message
		if _, ok := m.Meta["tool_calls"]; ok {
			t.Error("Meta tool_calls kept")
		}
		if _, ok := m.Meta["function_call"]; ok {
			t.Error("Meta function_call kept")
		}
		if m.Meta["anthropic_thinking_signature"] != "sig" || !cmp.Equal(m.Meta["custom_provider_field"], map[string]any{"x": 1}) ||
			m.Reasoning != "thinking text" {
			t.Errorf("message = %+v", m)
		}
		if _, ok := in.Message.Meta["tool_calls"]; !ok {
			t.Error("the model's own response was modified")
		}
	})
	t.Run("writes the record, the stop reason and the finish reason", func(t *testing.T) {
		out := safetyRun(t, SafetyFinishReasonOptions{}, flagged("", contentFilter, writeCall(1), writeCall(2)))
		want := map[string]any{"detector": "openai_compatible_content_filter", "reason_field": "finish_reason",
			"reason_value": "content_filter", "suppressed_tool_call_count": 2,
			"suppressed_tool_call_names": []string{"write_file", "write_file"}, "extras": map[string]any{}}
		if diff := cmp.Diff(want, record(t, out.resp)); diff != "" {
			t.Errorf("record (-want +got):\n%s", diff)
		}
		if out.resp.Message.Meta["stop_reason"] != "safety_capped" || out.resp.FinishReason != model.FinishSafety {
			t.Errorf("stop_reason %v, finish %q", out.resp.Message.Meta["stop_reason"], out.resp.FinishReason)
		}
	})
	t.Run("keeps the provider's metadata", func(t *testing.T) {
		out := safetyRun(t, SafetyFinishReasonOptions{}, flagged("", map[string]any{"finish_reason": "content_filter", "model_name": "kimi-k2"}, writeCall(1)))
		if diff := cmp.Diff(map[string]any{"finish_reason": "content_filter", "model_name": "kimi-k2"}, out.resp.Metadata); diff != "" {
			t.Errorf("Metadata (-want +got):\n%s", diff)
		}
	})
	t.Run("appends the explanation to the text", func(t *testing.T) {
		out := safetyRun(t, SafetyFinishReasonOptions{}, flagged("some partial text", contentFilter, writeCall(1)))
		c := out.resp.Message.Content
		if !strings.HasPrefix(c, "some partial text\n\n") || !strings.Contains(c, "safety-related signal") {
			t.Errorf("content = %q", c)
		}
	})
	t.Run("sets the explanation as empty text", func(t *testing.T) {
		out := safetyRun(t, SafetyFinishReasonOptions{}, flagged("", contentFilter, writeCall(1)))
		if !strings.HasPrefix(out.resp.Message.Content, "The model provider stopped") {
			t.Errorf("content = %q", out.resp.Message.Content)
		}
	})
	t.Run("is idempotent on a repaired message", func(t *testing.T) {
		first := safetyRun(t, SafetyFinishReasonOptions{}, flagged("", contentFilter, writeCall(1)))
		second := safetyRun(t, SafetyFinishReasonOptions{}, first.resp)
		if second.resp != first.resp || len(second.events) != 0 {
			t.Errorf("fired twice: %+v", second.resp)
		}
	})
	t.Run("keeps the message id", func(t *testing.T) {
		in := flagged("", contentFilter, writeCall(1))
		in.Message.ID = "msg-1"
		if out := safetyRun(t, SafetyFinishReasonOptions{}, in); out.resp.Message.ID != "msg-1" {
			t.Errorf("id = %q", out.resp.Message.ID)
		}
	})
}

// A detector that always or never reports, or panics.
type fakeDetector struct {
	name, value string
	hit, panics bool
}

func (d fakeDetector) Name() string { return d.name }

func (d fakeDetector) Detect(*model.Response) (SafetyTermination, bool) {
	if d.panics {
		panic("boom")
	}
	return SafetyTermination{Detector: d.name, ReasonField: "finish_reason", ReasonValue: d.value}, d.hit
}

func TestSafetyFinishReason_detectorWiring(t *testing.T) {
	bare := func() *model.Response { return flagged("", nil, writeCall(1)) }
	t.Run("detectors are tried in order", func(t *testing.T) {
		out := safetyRun(t, SafetyFinishReasonOptions{Detectors: []SafetyDetector{
			fakeDetector{name: "always_hit", value: "first", hit: true}, fakeDetector{name: "always_hit", value: "second", hit: true}}}, bare())
		if v := record(t, out.resp)["reason_value"]; v != "first" {
			t.Errorf("reason_value = %v", v)
		}
	})
	t.Run("no match passes through", func(t *testing.T) {
		in := flagged("", contentFilter, writeCall(1))
		out := safetyRun(t, SafetyFinishReasonOptions{Detectors: []SafetyDetector{fakeDetector{name: "never_hit"}, fakeDetector{name: "never_hit"}}}, in)
		if out.resp != in {
			t.Errorf("intervened: %+v", out.resp)
		}
	})
	t.Run("a panicking detector does not break the run", func(t *testing.T) {
		out := safetyRun(t, SafetyFinishReasonOptions{Detectors: []SafetyDetector{
			fakeDetector{name: "raising", panics: true}, fakeDetector{name: "always_hit", value: "content_filter", hit: true}}}, bare())
		if d := record(t, out.resp)["detector"]; d != "always_hit" {
			t.Errorf("detector = %v", d)
		}
		if !strings.Contains(out.log, "SafetyTerminationDetector 'raising' raised; treating as no-match") {
			t.Errorf("log = %q", out.log)
		}
	})
	t.Run("the detector list is copied", func(t *testing.T) {
		ds := []SafetyDetector{fakeDetector{name: "always_hit", value: "content_filter", hit: true}}
		mw := SafetyFinishReason(SafetyFinishReasonOptions{Detectors: ds})
		ds[0] = fakeDetector{name: "never_hit"}
		resp, _ := mw(func(context.Context, *tool.ModelCall) (*model.Response, error) { return bare(), nil })(t.Context(), &tool.ModelCall{})
		if len(resp.Message.ToolCalls) != 0 {
			t.Error("a caller's change reached the guard")
		}
	})
}

// The audit record (DeerFlow's middleware:safety_termination journal
// event).
func TestSafetyFinishReason_audit(t *testing.T) {
	var got []SafetyAudit
	rec := func(_ context.Context, a SafetyAudit) error { got = append(got, a); return nil }
	t.Run("an intervention is recorded", func(t *testing.T) {
		got = nil
		safetyRun(t, SafetyFinishReasonOptions{Record: rec}, flagged("partial", contentFilter, writeCall(1)))
		want := []SafetyAudit{{ThreadID: "t-1", RunID: "r-1", Detector: "openai_compatible_content_filter", ReasonField: "finish_reason",
			ReasonValue: "content_filter", Count: 1, Names: []string{"write_file"}, IDs: []string{"call_write_1"}, Extras: map[string]any{}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("never carries the calls' arguments", func(t *testing.T) {
		got = nil
		secret := model.ToolCall{ID: "call_x", Name: "write_file", Arguments: json.RawMessage(`{"content":"FILTERED_CONTENT_DO_NOT_PERSIST"}`)}
		out := safetyRun(t, SafetyFinishReasonOptions{Record: rec}, flagged("", contentFilter, secret))
		b, _ := json.Marshal(got)
		if len(got) != 1 || strings.Contains(string(b), "FILTERED_CONTENT") || strings.Contains(out.log, "FILTERED_CONTENT") ||
			strings.Contains(strings.Join(out.events, " "), "FILTERED_CONTENT") {
			t.Errorf("arguments leaked: %s / %s / %v", b, out.log, out.events)
		}
	})
	t.Run("without a journal the guard still intervenes", func(t *testing.T) {
		out := safetyRun(t, SafetyFinishReasonOptions{}, flagged("", contentFilter, writeCall(1)))
		if len(out.resp.Message.ToolCalls) != 0 || !strings.Contains(out.log, "Provider safety termination detected — suppressed 1 tool call(s)") {
			t.Errorf("resp %+v, log %q", out.resp, out.log)
		}
	})
	t.Run("a failing journal warns without breaking the run", func(t *testing.T) {
		fail := func(context.Context, SafetyAudit) error { return errors.New("db down") }
		out := safetyRun(t, SafetyFinishReasonOptions{Record: fail}, flagged("", contentFilter, writeCall(1)))
		if len(out.resp.Message.ToolCalls) != 0 || !strings.Contains(out.log, "Failed to record middleware:safety_termination event") {
			t.Errorf("resp %+v, log %q", out.resp, out.log)
		}
	})
	t.Run("nothing is recorded when the guard passes", func(t *testing.T) {
		got = nil
		safetyRun(t, SafetyFinishReasonOptions{Record: rec}, flagged("", map[string]any{"finish_reason": "tool_calls"}, writeCall(1)))
		if len(got) != 0 {
			t.Errorf("recorded %v", got)
		}
	})
}

// The safety_termination event, so that a client can take back the tool
// calls it already showed as starting.
func TestSafetyFinishReason_streamEvent(t *testing.T) {
	t.Run("emitted with DeerFlow's fields", func(t *testing.T) {
		var data map[string]any
		call := &tool.ModelCall{ThreadID: "t-stream", Emit: func(ev string, d any) {
			if ev == "safety_termination" {
				data = d.(map[string]any)
			}
		}}
		_, err := SafetyFinishReason(SafetyFinishReasonOptions{})(func(context.Context, *tool.ModelCall) (*model.Response, error) {
			return flagged("", contentFilter, writeCall(1)), nil
		})(t.Context(), call)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"detector": "openai_compatible_content_filter", "reason_field": "finish_reason", "reason_value": "content_filter",
			"suppressed_tool_call_count": 1, "suppressed_tool_call_names": []string{"write_file"}, "thread_id": "t-stream"}
		if diff := cmp.Diff(want, data); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("no event sink does not break the guard", func(t *testing.T) {
		resp, err := SafetyFinishReason(SafetyFinishReasonOptions{})(func(context.Context, *tool.ModelCall) (*model.Response, error) {
			return flagged("", contentFilter, writeCall(1)), nil
		})(t.Context(), &tool.ModelCall{})
		if err != nil || len(resp.Message.ToolCalls) != 0 {
			t.Errorf("%+v, %v", resp, err)
		}
	})
}
