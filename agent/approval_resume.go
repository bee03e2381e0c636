package agent

import (
	"context"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
)

// approvalAnswer is the human's answer to one approval card.
type approvalAnswer struct {
	// requestID is the card answered ("" for a plain message, which
	// answers the newest pending card, as DeerFlow's frontend reads it).
	requestID string
	// approve and thread: approved once, or for the rest of the thread;
	// neither: rejected with reason.
	approve, thread bool
	reason          string
}

// answerPrefix is the text DeerFlow's frontend sends for an answered card:
// `For your clarification "<question>", my answer is: <value>`.
const (
	answerPrefix = `For your clarification "`
	answerMarker = `", my answer is: `
	// answerSeparators may separate "reject" from its reason.
	answerSeparators = " :-,.;\n\t"
)

// parseApprovalAnswer reads the answer in a human message: the
// human_input_response of DeerFlow's frontend (its request_id and value),
// else the message text (with the frontend's wrapper removed). The value
// "approve" (or "yes", "y") approves once, "approve for this thread" (or
// "always") for the thread, and "reject", optionally followed by a reason
// ("reject: not that file"), rejects. Anything else is a rejection whose
// reason is the whole text.
func parseApprovalAnswer(m model.Message) approvalAnswer {
	var a approvalAnswer
	value := m.Content
	if r, ok := m.Meta["human_input_response"].(map[string]any); ok {
		a.requestID, _ = r["request_id"].(string)
		if v, ok := r["value"].(string); ok {
			value = v
		}
	} else if strings.HasPrefix(value, answerPrefix) {
		if i := strings.Index(value, answerMarker); i >= 0 {
			value = value[i+len(answerMarker):]
		}
	}
	value = strings.TrimSpace(value)
	word := strings.ToLower(strings.TrimRight(value, ".! "))
	switch word {
	case AnswerApprove, "approved", "approve once", "yes", "y":
		a.approve = true
		return a
	case AnswerApproveThread, "always", "approve always":
		a.approve, a.thread = true, true
		return a
	}
	for _, w := range []string{"rejected", AnswerReject, "no"} {
		if !strings.HasPrefix(strings.ToLower(value), w) {
			continue
		}
		if rest := value[len(w):]; rest == "" || strings.ContainsAny(rest[:1], answerSeparators) {
			a.reason = strings.TrimSpace(strings.TrimLeft(rest, answerSeparators))
			return a
		}
	}
	a.reason = value
	return a
}

// resumeApprovals answers the thread's pending approvals with the run's
// human message, before the first model call. The answered card is the
// one the message names (DeerFlow's human_input_response), else the
// newest. Its call is replayed as an assistant message of its own with a
// new call id (the card's tool message already answers the original
// call, so every call keeps exactly one tool message): approved, it runs
// through the whole tool chain, the approval check passed for that call
// and those arguments only; rejected, the model gets the rejection and
// the reason as its result. The run stops again (StopApproval) while
// other cards stay unanswered, and when the run brings no human message.
func (r *runState) resumeApprovals(ctx context.Context) (StopReason, error) {
	pending := r.state.Approvals
	if len(pending) == 0 {
		return "", nil
	}
	human, ok := lastHuman(r.in.Messages)
	if !ok {
		r.emitPending()
		return StopApproval, nil
	}
	ans := parseApprovalAnswer(human)
	p := pending[len(pending)-1]
	for _, q := range pending {
		if ans.requestID != "" && q.RequestID == ans.requestID {
			p = q
		}
	}
	replayID := p.CallID + "_answered"
	upd := &thread.Update{Approvals: []thread.Approval{{CallID: p.CallID, Resolved: true}}}
	if ans.thread {
		upd.ApprovalGrants = []thread.ApprovalGrant{grant(p)}
	}
	if err := r.state.Apply(upd); err != nil {
		return "", err
	}
	r.logger.Info("pending tool call answered", "tool", p.Tool, "tool_call_id", p.CallID, "approved", ans.approve, "for_thread", ans.thread)
	msg := model.Message{ID: newID(), Role: model.RoleAssistant,
		ToolCalls: []model.ToolCall{{ID: replayID, Name: p.Tool, Arguments: p.Arguments}},
		Meta:      map[string]any{"approval_request_id": p.RequestID}}
	r.appendMessage(msg, true)
	m := msg
	r.emit(Event{Type: EventMessage, Message: &m}, nil)
	if err := r.checkpoint(ctx, "approval"); err != nil {
		return "", err
	}
	v := verdict{approved: ans.approve, tool: p.Tool, args: p.Arguments, reason: ans.reason, subagent: p.Subagent, answer: ans.value()}
	stop, err := r.toolStep(withVerdicts(ctx, map[string]verdict{replayID: v}), msg)
	if err != nil {
		return "", err
	}
	if err := r.checkpoint(ctx, "loop"); err != nil {
		return "", err
	}
	if stop != "" {
		return stop, nil
	}
	if len(r.state.Approvals) > 0 {
		r.emitPending()
		return StopApproval, nil
	}
	return "", nil
}

// lastHuman is the last user message of the run's input.
func lastHuman(msgs []model.Message) (model.Message, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			return msgs[i], true
		}
	}
	return model.Message{}, false
}

// emitPending emits an approval event for every pending call, with its
// card (the tool message the request created) when the thread still has
// it.
func (r *runState) emitPending() {
	for _, p := range r.state.Approvals {
		ev := Event{Type: EventApproval, ToolCallID: p.CallID, Name: p.Tool, Arguments: p.Arguments}
		for _, m := range r.state.Messages {
			if m.ID == p.RequestID {
				msg := m
				ev.Message = &msg
				ev.Data, _ = humanInput(m.Artifact)
			}
		}
		r.emit(ev, nil)
	}
}
