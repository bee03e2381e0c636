package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// The texts the model and the user read after a safety stop (DeerFlow's),
// with the reason field, its value and the detector (Python reprs).
const (
	safetySuppressedText = "The model provider stopped this response with a safety-related signal " +
		"(%s=%s, detector=%s). Any tool calls produced in this turn were suppressed because their " +
		"arguments may be truncated and unsafe to execute. Please rephrase the request or ask for a narrower output."
	safetyEmptyText = "The model provider stopped this response with a safety-related signal " +
		"(%s=%s, detector=%s) and returned no content. Please rephrase your request or start a new conversation."
)

// Names in the event stream, the message and the audit record, as
// DeerFlow's.
const (
	// SafetyTerminationEvent is the custom event emitted when the guard
	// intervenes, and the Meta key of the record on the message.
	SafetyTerminationEvent = "safety_termination"
)

// SafetyAudit is the audit record of one intervention (DeerFlow journals
// it as middleware:safety_termination). The calls' arguments are never
// in it: they are the content the provider filtered.
type SafetyAudit struct {
	ThreadID    string         `json:"thread_id"`
	RunID       string         `json:"run_id"`
	Detector    string         `json:"detector"`
	ReasonField string         `json:"reason_field"`
	ReasonValue string         `json:"reason_value"`
	Count       int            `json:"suppressed_tool_call_count"`
	Names       []string       `json:"suppressed_tool_call_names"`
	IDs         []string       `json:"suppressed_tool_call_ids"`
	MessageID   string         `json:"message_id"`
	Extras      map[string]any `json:"extras"`
}

// SafetyFinishReasonOptions configures SafetyFinishReason. The zero value
// is DeerFlow's default: its three detectors, logs to the run's logger,
// no audit journal.
type SafetyFinishReasonOptions struct {
	// Detectors are tried in order, the first match wins; nil means
	// DefaultSafetyDetectors. The slice is copied.
	Detectors []SafetyDetector
	// Logger receives the warning of each intervention; nil uses the
	// model call's logger.
	Logger *slog.Logger
	// Record, if set, receives the audit record of each intervention; an
	// error it returns is logged and never stops the run. nil keeps no
	// journal (the warning is logged either way).
	Record func(ctx context.Context, a SafetyAudit) error
}

// SafetyFinishReason is DeerFlow's SafetyFinishReasonMiddleware, the
// safety_finish_reason section: it inspects each response the model
// returns and, when a detector finds that the provider stopped it with a
// safety signal (finish_reason content_filter, stop_reason refusal, ...):
//
//   - with tool calls, drops them, since their arguments may be cut off,
//     and appends an explanation to the text;
//   - with no tool calls and no visible text, sets an explanation as the
//     text, so that no empty assistant message is stored (strict
//     providers refuse one on every later request);
//   - with text and no tool calls, leaves the response alone.
//
// An intervention records safety_termination and stop_reason
// safety_capped in the message's Meta, emits the safety_termination
// event, logs a warning and sends the audit record. Placed innermost in
// the model chain (agent/recipe.go), it sees the provider's response
// before loop detection counts its calls.
func SafetyFinishReason(opts SafetyFinishReasonOptions) tool.ModelMiddleware {
	detectors := DefaultSafetyDetectors()
	if opts.Detectors != nil {
		detectors = append([]SafetyDetector(nil), opts.Detectors...)
	}
	g := &safetyGuard{detectors: detectors, logger: opts.Logger, record: opts.Record}
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			resp, err := next(ctx, call)
			if err != nil || resp == nil {
				return resp, err
			}
			return g.inspect(ctx, call, resp), nil
		}
	}
}

type safetyGuard struct {
	detectors []SafetyDetector
	logger    *slog.Logger
	record    func(context.Context, SafetyAudit) error
}

func (g *safetyGuard) log(call *tool.ModelCall) *slog.Logger {
	if g.logger != nil {
		return g.logger
	}
	return call.Log()
}

// inspect returns resp, or its repaired copy when a detector fires.
func (g *safetyGuard) inspect(ctx context.Context, call *tool.ModelCall, resp *model.Response) *model.Response {
	calls := resp.Message.ToolCalls
	blank := !hasVisibleText(resp.Message)
	if len(calls) == 0 && !blank {
		return resp
	}
	term, ok := g.detect(call, resp)
	if !ok {
		return resp
	}
	names := make([]string, len(calls))
	var ids []string
	for i, c := range calls {
		names[i] = c.Name
		if names[i] == "" {
			names[i] = "unknown"
		}
		if c.ID != "" {
			ids = append(ids, c.ID)
		}
	}
	out := suppressed(resp, term, names)
	backfilled := blank && len(calls) == 0
	g.log(call).Warn(fmt.Sprintf("Provider safety termination detected — suppressed %d tool call(s), backfilled_empty_content=%s",
		len(calls), pyBool(backfilled)),
		"thread_id", call.ThreadID, "detector", term.Detector, "reason_field", term.ReasonField,
		"reason_value", term.ReasonValue, "suppressed_tool_call_names", names, "backfilled_empty_content", backfilled)
	call.EmitEvent(SafetyTerminationEvent, map[string]any{
		"detector": term.Detector, "reason_field": term.ReasonField, "reason_value": term.ReasonValue,
		"suppressed_tool_call_count": len(names), "suppressed_tool_call_names": names, "thread_id": nilIfEmpty(call.ThreadID),
	})
	if g.record != nil {
		a := SafetyAudit{ThreadID: call.ThreadID, RunID: call.RunID, Detector: term.Detector, ReasonField: term.ReasonField,
			ReasonValue: term.ReasonValue, Count: len(calls), Names: names, IDs: ids, MessageID: resp.Message.ID,
			Extras: cloneExtras(term.Extras)}
		if err := g.record(ctx, a); err != nil {
			g.log(call).Warn("Failed to record middleware:safety_termination event", "err", err)
		}
	}
	return out
}

// detect runs the detectors in order; one that panics counts as no match,
// so that a faulty detector never breaks a run.
func (g *safetyGuard) detect(call *tool.ModelCall, resp *model.Response) (SafetyTermination, bool) {
	for _, d := range g.detectors {
		if t, ok := safeDetect(call, d, resp); ok {
			return t, true
		}
	}
	return SafetyTermination{}, false
}

func safeDetect(call *tool.ModelCall, d SafetyDetector, resp *model.Response) (t SafetyTermination, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			call.Log().Error(fmt.Sprintf("SafetyTerminationDetector %s raised; treating as no-match", pyRepr(d.Name())), "panic", p)
			t, ok = SafetyTermination{}, false
		}
	}()
	return d.Detect(resp)
}

// suppressed returns a copy of resp without tool calls, with the
// explanation appended and the record in Meta. The provider's metadata is
// kept as it came, so that the real reason stays visible.
func suppressed(resp *model.Response, term SafetyTermination, names []string) *model.Response {
	text := safetyEmptyText
	if len(names) > 0 {
		text = safetySuppressedText
	}
	text = fmt.Sprintf(text, term.ReasonField, pyRepr(term.ReasonValue), pyRepr(term.Detector))
	out := capped(resp, withParagraph(resp.Message.Content, text), StopSafetyCapped, map[string]any{
		SafetyTerminationEvent: map[string]any{
			"detector": term.Detector, "reason_field": term.ReasonField, "reason_value": term.ReasonValue,
			"suppressed_tool_call_count": len(names), "suppressed_tool_call_names": names, "extras": cloneExtras(term.Extras),
		},
	})
	// Raw provider call payloads, should a model pass them through, go
	// too: nothing may resurrect the calls.
	delete(out.Message.Meta, "tool_calls")
	delete(out.Message.Meta, "function_call")
	out.FinishReason = model.FinishSafety
	return out
}

// hasVisibleText reports whether a message has non-blank text.
func hasVisibleText(m model.Message) bool {
	if strings.TrimSpace(m.Content) != "" {
		return true
	}
	for _, p := range m.Parts {
		if p.Type == model.PartText && strings.TrimSpace(p.Text) != "" {
			return true
		}
	}
	return false
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
