package builtin

import (
	"context"
	"fmt"

	"github.com/antlerhq/antler/thread"
)

// This file is the task tool's side of relaying a subagent's approval to
// the parent's human (docs/design.md, "A subagent's approval is asked of
// the parent's human"): the approval middleware of the parent says
// through the context that it relays, and hands the human's answer back
// when it resumes a paused task.

// TaskResume resumes a paused task: the subagent's saved state and the
// human's answer to its pending call.
type TaskResume struct {
	// Pause is the paused subagent, as the parent's pending approval
	// recorded it.
	Pause *thread.SubagentApproval
	// Answer is the human's answer in the approval flow's words
	// ("approve", "approve for this thread", or "reject: reason").
	Answer string
}

type relayKey struct{}

type resumeKey struct{}

// WithApprovalRelay marks ctx as that of a task call whose parent relays
// a subagent's approval to its human: the subagent may ask instead of
// being refused.
func WithApprovalRelay(ctx context.Context) context.Context {
	return context.WithValue(ctx, relayKey{}, true)
}

// approvalRelay reports whether ctx relays a subagent's approval.
func approvalRelay(ctx context.Context) bool {
	v, _ := ctx.Value(relayKey{}).(bool)
	return v
}

// WithTaskResume hands a task call the answer that resumes its paused
// subagent.
func WithTaskResume(ctx context.Context, r TaskResume) context.Context {
	return context.WithValue(ctx, resumeKey{}, &r)
}

// taskResume is the resume of ctx, if any.
func taskResume(ctx context.Context) *TaskResume {
	r, _ := ctx.Value(resumeKey{}).(*TaskResume)
	return r
}

// TaskPausedError is the failure text of a task whose subagent asked for
// an approval that nobody relays (the parent cannot ask): the model
// reads it if the result is not turned into a card.
func TaskPausedError(p *thread.SubagentApproval) string {
	return fmt.Sprintf("The subagent's call to %s needs a human's approval, and it cannot be asked here; the call did not run.", p.Tool)
}
