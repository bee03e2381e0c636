package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolpolicy"
)

// This file relays a subagent's approval to the parent run's human
// (docs/design.md, "A subagent's approval is asked of the parent's
// human"): the task call of a run that can ask is marked as relaying; a
// task whose subagent paused for an approval becomes the parent's card
// naming the subagent's call; the answer resumes the subagent from the
// state the card saved.

// ContextApprovalRelay is the runtime context key that lets a subagent
// ask for an approval: the executor sets it when the parent relays.
const ContextApprovalRelay = "approval_relay"

// canRelay reports whether a task call may pause for its subagent's
// approvals: a policy decides, asks are not approved by policy, and the
// calling run has a human (it is no subagent, clarification is on).
func canRelay(opts ApprovalOptions, call *tool.Call) bool {
	return call.Name == builtin.TaskName && opts.Decider != nil && !opts.AskIsAllow &&
		!call.ContextBool("is_subagent") && !call.ContextBool("disable_clarification")
}

// relayTask runs a task call that relays: a resumed one (its verdict
// carries the paused subagent) hands the answer to the task tool, which
// resumes the subagent from its saved state, so that the subagent's own
// approval flow replays exactly its paused call; a fresh one goes
// through the policy (decide). A task that pauses again becomes a card.
func relayTask(ctx context.Context, next, decide tool.Handler, call *tool.Call, args json.RawMessage, log *slog.Logger) (*tool.Result, error) {
	ctx = builtin.WithApprovalRelay(ctx)
	var res *tool.Result
	var err error
	if v, ok := answeredVerdict(ctx, call.ID); ok && v.subagent != nil && sameJSON(v.args, args) {
		ctx = builtin.WithTaskResume(ctx, builtin.TaskResume{Pause: v.subagent, Answer: v.answer})
		res, err = next(ctx, call, args)
	} else {
		res, err = decide(ctx, call, args)
	}
	if err != nil || res == nil {
		return res, err
	}
	p, ok := res.Artifact.(*thread.SubagentApproval)
	if !ok {
		return res, nil
	}
	log.Info("a subagent's tool call paused for the human's approval", "tool", p.Tool, "rule", p.Rule, "subagent", p.Type)
	return subagentApprovalRequest(call.ID, args, p), nil
}

// subagentApprovalRequest is the parent's card for a paused subagent: it
// names the subagent type, its tool, arguments and rule, in the shape of
// ApprovalRequest's card; the pending approval is the task call with the
// subagent's saved state.
func subagentApprovalRequest(callID string, taskArgs json.RawMessage, p *thread.SubagentApproval) *tool.Result {
	d := toolpolicy.Decision{Action: toolpolicy.ActionAsk, Rule: p.Rule, Reason: p.Reason}
	why := fmt.Sprintf("The tool policy asks before this call of the %s subagent (%s).\n%s %s",
		p.Type, ruleText(d), p.Tool, clip(string(p.Arguments), maxApprovalArgsShown))
	r := approvalCard(callID, p.Tool, p.Arguments, d, why)
	r.Artifact.(map[string]any)["human_input"].(map[string]any)["approval"].(map[string]any)["subagent_type"] = p.Type
	r.Update = &thread.Update{Approvals: []thread.Approval{{CallID: callID, RequestID: r.MessageID, Tool: builtin.TaskName,
		Arguments: bytes.Clone(taskArgs), Rule: p.Rule, Reason: p.Reason, Subagent: p}}}
	return r
}

// value is the answer in the approval flow's words, as a resumed
// subagent reads it.
func (a approvalAnswer) value() string {
	switch {
	case a.thread:
		return AnswerApproveThread
	case a.approve:
		return AnswerApprove
	case a.reason != "":
		return AnswerReject + ": " + a.reason
	}
	return AnswerReject
}

// grant is the "approve for this thread" grant of answering p: a
// subagent's card grants the subagent's tool and rule.
func grant(p thread.Approval) thread.ApprovalGrant {
	if p.Subagent != nil {
		return thread.ApprovalGrant{Tool: p.Subagent.Tool, Rule: p.Subagent.Rule}
	}
	return thread.ApprovalGrant{Tool: p.Tool, Rule: p.Rule}
}
