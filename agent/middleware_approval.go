package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolpolicy"
)

// This file is the approval flow of Antler's tool policy (beyond
// DeerFlow; docs/differences.md, "Approval before dangerous tools"): what
// happens to a call once the policy has decided allow, deny or ask, and
// how the human's answer resumes the run (approval_resume.go).

// ApprovalSource is the human_input source of an approval card, so that
// clients and the resume tell it from an ask_clarification question.
const ApprovalSource = "tool_approval"

// The option values of an approval card: what the human answers.
const (
	AnswerApprove       = "approve"
	AnswerApproveThread = "approve for this thread"
	AnswerReject        = "reject"
)

// maxApprovalArgsShown caps the arguments shown on a card, in characters.
const maxApprovalArgsShown = 1000

// ApprovalOptions configure the Approval middleware. The zero value asks
// nothing: every call runs.
type ApprovalOptions struct {
	// Decider is the policy; nil allows every call.
	Decider toolpolicy.Decider
	// AskIsAllow runs a call the policy asks about without asking (for
	// runs with no human, `antler run --approve-all`); deny still holds.
	AskIsAllow bool
	// Logger receives a line per decided call; nil uses each call's logger.
	Logger *slog.Logger
}

// Approval returns the tool middleware that applies the policy's
// decision: allow runs the call; deny returns an error result naming the
// rule (the tool never runs); ask pauses the run before the tool runs:
// the call's tool message becomes a clarification card
// (human_input_request with the options approve, approve for this thread
// and reject), the call is recorded as pending in the thread state and
// the run ends, as ask_clarification ends it. A subagent, or a run whose
// context has no human (disable_clarification), cannot ask: the call is
// refused with a text saying so. ask_clarification itself is never asked
// about (it asks the human already).
func Approval(opts ApprovalOptions) tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		decide := func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			if v, ok := answeredVerdict(ctx, call.ID); ok {
				if !v.approved {
					return rejectedResult(call.Name, v.reason), nil
				}
				if v.tool == call.Name && sameJSON(v.args, args) {
					return next(ctx, call, args) // this call, and only this one, was approved
				}
			}
			if opts.Decider == nil {
				return next(ctx, call, args)
			}
			d := opts.Decider.Decide(call, args)
			log := approvalLogger(opts, call)
			switch d.Action {
			case toolpolicy.ActionDeny:
				log.Info("tool call denied by the tool policy", "tool", call.Name, "rule", d.Rule)
				return deniedResult(call.Name, d), nil
			case toolpolicy.ActionAsk:
				return askOrRun(ctx, next, call, args, d, opts.AskIsAllow, log)
			}
			return next(ctx, call, args)
		}
		return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			if canRelay(opts, call) {
				return relayTask(ctx, next, decide, call, args, approvalLogger(opts, call))
			}
			return decide(ctx, call, args)
		}
	}
}

// approvalLogger is the logger of the decisions about call.
func approvalLogger(opts ApprovalOptions, call *tool.Call) *slog.Logger {
	if opts.Logger != nil {
		return opts.Logger
	}
	return call.Log()
}

// askOrRun handles an ask decision: it runs the call when asking is not
// needed (a grant for the thread, AskIsAllow, ask_clarification), refuses
// it where no human can answer, and otherwise pauses with a card.
func askOrRun(ctx context.Context, next tool.Handler, call *tool.Call, args json.RawMessage, d toolpolicy.Decision, askIsAllow bool, log *slog.Logger) (*tool.Result, error) {
	switch {
	case call.Name == builtin.AskClarificationName:
		return next(ctx, call, args)
	case call.State.HasApprovalGrant(call.Name, d.Rule):
		log.Info("tool call approved for this thread earlier", "tool", call.Name, "rule", d.Rule)
		return next(ctx, call, args)
	case askIsAllow:
		log.Info("tool call the policy asks about runs: asks are approved by policy for this run", "tool", call.Name, "rule", d.Rule)
		return next(ctx, call, args)
	case call.ContextBool("is_subagent") && call.ContextBool(ContextApprovalRelay):
		// The parent relays the ask to its human (approval_subagent.go).
		log.Info("a subagent's tool call pauses for the parent's human", "tool", call.Name, "rule", d.Rule)
		return ApprovalRequest(call.ID, call.Name, args, d), nil
	case call.ContextBool("is_subagent"):
		return tool.Errorf("Error: %s needs a human's approval (%s), and a subagent cannot ask for it; the call did not run. "+
			"Finish the task without this call, or say in your answer that it needs approval so that the lead agent can make it.",
			call.Name, ruleText(d)), nil
	case call.ContextBool("disable_clarification"):
		return tool.Errorf("Error: %s needs a human's approval (%s), and no human is present to answer in this context; the call did not run.",
			call.Name, ruleText(d)), nil
	}
	log.Info("tool call paused for the human's approval", "tool", call.Name, "rule", d.Rule)
	return ApprovalRequest(call.ID, call.Name, args, d), nil
}

// ApprovalRequest builds the result of a call the policy asks about: the
// card's text, the human_input payload in the artifact (DeerFlow's
// clarification shape, so that its frontend renders and answers it), the
// pending approval in the state update, and End.
func ApprovalRequest(callID, toolName string, args json.RawMessage, d toolpolicy.Decision) *tool.Result {
	why := fmt.Sprintf("The tool policy asks before this call (%s).\n%s %s", ruleText(d), toolName, clip(string(args), maxApprovalArgsShown))
	r := approvalCard(callID, toolName, args, d, why)
	r.Update = &thread.Update{Approvals: []thread.Approval{{CallID: callID, RequestID: r.MessageID, Tool: toolName,
		Arguments: bytes.Clone(args), Rule: d.Rule, Reason: d.Reason}}}
	return r
}

// approvalCard is the card of a paused call of toolName, explained by
// why, for the tool call callID: its text, its human_input payload and
// End.
func approvalCard(callID, toolName string, args json.RawMessage, d toolpolicy.Decision, why string) *tool.Result {
	id := "approval:" + callID
	shown := clip(string(args), maxApprovalArgsShown)
	question := fmt.Sprintf("Allow %s to run?", toolName)
	options := []any{
		map[string]any{"id": "approve", "label": "Approve once", "value": AnswerApprove},
		map[string]any{"id": "approve-thread", "label": "Approve for this thread", "value": AnswerApproveThread},
		map[string]any{"id": "reject", "label": "Reject", "value": AnswerReject},
	}
	payload := map[string]any{
		"version": 1, "kind": "human_input_request", "source": ApprovalSource, "request_id": id,
		"tool_call_id": callID, "clarification_type": "risk_confirmation", "question": question,
		"context": why, "input_mode": "choice_with_other", "options": options,
		"approval": map[string]any{"tool": toolName, "arguments": shown, "rule": d.Rule, "reason": d.Reason},
	}
	text := fmt.Sprintf("⚠️ %s\n\n%s\n\n  1. %s\n  2. %s\n  3. %s (a reason may follow: \"reject: not that file\")",
		why, question, AnswerApprove, AnswerApproveThread, AnswerReject)
	r := tool.Text(text)
	r.MessageID = id
	r.Artifact = map[string]any{"human_input": payload}
	r.End = true
	return r
}

// ruleText names the rule and its reason for the texts.
func ruleText(d toolpolicy.Decision) string {
	rule := d.Rule
	if rule == "" {
		rule = "tool_policy"
	}
	if d.Reason != "" {
		return rule + ": " + d.Reason
	}
	return rule
}

// deniedResult is the result of a call the policy refuses.
func deniedResult(name string, d toolpolicy.Decision) *tool.Result {
	return tool.Errorf("Error: the tool policy does not allow this call to %s (%s); it did not run. Do not retry it.", name, ruleText(d))
}

// rejectedResult is the result of a call the human rejected.
func rejectedResult(name, reason string) *tool.Result {
	if strings.TrimSpace(reason) == "" {
		return tool.Errorf("Error: the user rejected this call to %s; it did not run. No reason was given.", name)
	}
	return tool.Errorf("Error: the user rejected this call to %s; it did not run. The user's reason: %s", name, reason)
}

// isApprovalRequest reports whether a tool message's artifact is an
// approval card.
func isApprovalRequest(artifact any) bool {
	p, ok := humanInput(artifact)
	if !ok {
		return false
	}
	m, ok := p.(map[string]any)
	return ok && m["source"] == ApprovalSource
}

// sameJSON reports whether two JSON texts are the same value.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b)) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// verdict is the human's answer to one pending call, handed to the
// middleware through the context of the resumed step only.
type verdict struct {
	approved bool
	tool     string
	args     json.RawMessage
	reason   string
	// subagent and answer: the call is a task call whose subagent
	// paused; the answer resumes it (approval_subagent.go).
	subagent *thread.SubagentApproval
	answer   string
}

type verdictsKey struct{}

func withVerdicts(ctx context.Context, v map[string]verdict) context.Context {
	return context.WithValue(ctx, verdictsKey{}, v)
}

func answeredVerdict(ctx context.Context, callID string) (verdict, bool) {
	m, _ := ctx.Value(verdictsKey{}).(map[string]verdict)
	v, ok := m[callID]
	return v, ok
}
