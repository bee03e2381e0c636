package thread

import (
	"encoding/json"
	"slices"
)

// maxPendingApprovals is how many pending approvals a thread keeps; older
// entries beyond it are dropped (their calls stay answered by their
// approval-request tool messages, so the transcript remains valid).
const maxPendingApprovals = 64

// maxApprovalGrants is how many "approve for this thread" grants a thread
// remembers; the oldest go first.
const maxApprovalGrants = 64

// Approval is a tool call that the approval policy paused until a human
// answers (see docs/design.md, "Approval before dangerous tools"). The
// exact call is kept so that an approval runs that call and no other.
type Approval struct {
	// CallID is the id of the paused tool call.
	CallID string `json:"call_id"`
	// RequestID is the id of the card shown to the human (the
	// human_input request_id and the tool message's id).
	RequestID string `json:"request_id"`
	// Tool is the called tool's name; Arguments the exact JSON object the
	// model sent.
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Rule names the policy rule that asked; Reason is its reason.
	Rule   string `json:"rule,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Resolved, in an Update, removes the pending entry with CallID.
	Resolved bool `json:"resolved,omitempty"`
	// Subagent is set when the paused call is a task call whose subagent
	// asked: the card names the subagent's call, and the answer resumes
	// the subagent from its saved state (docs/design.md, "A subagent's
	// approval is asked of the parent's human").
	Subagent *SubagentApproval `json:"subagent,omitempty"`
}

// SubagentApproval is a subagent's paused call, relayed to the parent:
// the subagent's own pending approval and its whole saved state.
type SubagentApproval struct {
	// Type is the subagent type that asked.
	Type string `json:"type"`
	// CallID, RequestID, Tool, Arguments, Rule and Reason are the
	// subagent's own pending approval (its call, its card).
	CallID    string          `json:"call_id"`
	RequestID string          `json:"request_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Rule      string          `json:"rule,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	// State is the subagent's thread state as JSON (its messages and
	// pending approvals), at most MaxSubagentStateBytes.
	State json.RawMessage `json:"state"`
}

// MaxSubagentStateBytes caps the saved state of a paused subagent, in
// serialised bytes; a subagent whose state is larger cannot pause, and
// its ask is refused.
const MaxSubagentStateBytes = 4 << 20

// maxPendingSubagentApprovals is how many paused subagents a thread
// keeps pending; older ones are dropped as maxPendingApprovals drops
// older calls.
const maxPendingSubagentApprovals = 8

// ApprovalGrant is an "approve for this thread" answer: later calls of
// Tool that Rule asks about run without asking again on this thread.
type ApprovalGrant struct {
	Tool string `json:"tool"`
	Rule string `json:"rule"`
}

// mergeApprovals upserts by CallID in first-seen order; an entry with
// Resolved set removes its call. Only the maxPendingApprovals most recent
// entries survive.
func mergeApprovals(existing, update []Approval) []Approval {
	out := slices.Clone(existing)
	for _, a := range update {
		i := slices.IndexFunc(out, func(o Approval) bool { return o.CallID == a.CallID })
		switch {
		case a.Resolved && i >= 0:
			out = slices.Delete(out, i, i+1)
		case a.Resolved:
		case i >= 0:
			out[i] = a
		default:
			out = append(out, a)
		}
	}
	if len(out) > maxPendingApprovals {
		out = slices.Clone(out[len(out)-maxPendingApprovals:])
	}
	return dropOldSubagentPauses(out)
}

// dropOldSubagentPauses keeps the maxPendingSubagentApprovals most recent
// entries that carry a subagent's saved state, so that a thread holds at
// most that many times MaxSubagentStateBytes of them.
func dropOldSubagentPauses(out []Approval) []Approval {
	kept := 0
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Subagent == nil {
			continue
		}
		if kept++; kept > maxPendingSubagentApprovals {
			out = slices.Delete(out, i, i+1)
		}
	}
	return out
}

// mergeApprovalGrants appends grants not yet recorded, keeping the
// maxApprovalGrants most recent.
func mergeApprovalGrants(existing, update []ApprovalGrant) []ApprovalGrant {
	out := slices.Clone(existing)
	for _, g := range update {
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	if len(out) > maxApprovalGrants {
		out = slices.Clone(out[len(out)-maxApprovalGrants:])
	}
	return out
}

// HasApprovalGrant reports whether the thread has approved tool under
// rule for the rest of the thread.
func (s *State) HasApprovalGrant(tool, rule string) bool {
	return s != nil && slices.Contains(s.ApprovalGrants, ApprovalGrant{Tool: tool, Rule: rule})
}
