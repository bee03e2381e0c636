package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// pausingDelegator is a hand-written builtin.Delegator whose subagent
// asks before its write_file: a fresh task pauses (when the parent
// relays; else it is refused, as the subagent's middleware refuses), a
// resumed one completes with the answer it was handed.
type pausingDelegator struct {
	mu   sync.Mutex
	reqs []builtin.TaskRequest
}

var subPause = &thread.SubagentApproval{Type: "general-purpose", CallID: "s1", RequestID: "approval:s1", Tool: "write_file",
	Arguments: json.RawMessage(`{"path":"a"}`), Rule: "tool_policy.rules[0]", Reason: "writes need a look",
	State: json.RawMessage(`{"messages":[{"role":"user","content":"save a"}]}`)}

func (d *pausingDelegator) ResolveTask(name, _ string) (builtin.TaskType, error) {
	return builtin.TaskType{Name: name, ModelName: "m"}, nil
}

func (d *pausingDelegator) Delegate(_ context.Context, req builtin.TaskRequest, _ func(builtin.TaskProgress)) (builtin.TaskResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reqs = append(d.reqs, req)
	switch {
	case req.Resume != nil:
		return builtin.TaskResult{Status: builtin.TaskCompleted, Result: "subagent read: " + req.Resume.Answer}, nil
	case !req.ApprovalRelay:
		return builtin.TaskResult{Status: builtin.TaskCompleted, Result: "refused"}, nil
	}
	return builtin.TaskResult{Status: builtin.TaskFailed, Error: builtin.TaskPausedError(subPause), Pause: subPause}, nil
}

func (d *pausingDelegator) requests() []builtin.TaskRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]builtin.TaskRequest(nil), d.reqs...)
}

const taskArgs = `{"description":"save","prompt":"save a","subagent_type":"general-purpose"}`

func taskAgent(t *testing.T, m *fakeModel, dir string, d *pausingDelegator, opts agent.ApprovalOptions) (*agent.Agent, func()) {
	t.Helper()
	s := openStore(t, dir)
	return newAgent(t, agent.Options{Model: m, Store: s, Tools: []*tool.Tool{builtin.NewTask(d)},
		ToolMiddlewares: []tool.Middleware{agent.Approval(opts)}}), func() { s.Close() }
}

// A task whose subagent paused becomes the parent's card naming the
// subagent's call; after a restart the answer resumes the subagent from
// the saved state (the delegator is handed exactly that pause and the
// answer), the model reads the task's result as the one tool message of
// the replayed call, and "approve for this thread" grants the
// subagent's tool and rule on the parent thread.
func TestApproval_subagentAskIsRelayedAndResumedAfterRestart(t *testing.T) {
	tests := []struct {
		name, answer, want string
		grants             []thread.ApprovalGrant
	}{
		{"approve", "approve", "subagent read: approve", nil},
		{"approve for this thread grants the subagent's tool", "approve for this thread", "subagent read: approve for this thread",
			[]thread.ApprovalGrant{{Tool: "write_file", Rule: "tool_policy.rules[0]"}}},
		{"reject hands the reason to the subagent", "reject: not a", "subagent read: reject: not a", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, d := t.TempDir(), &pausingDelegator{}
			a, done := taskAgent(t, &fakeModel{steps: []step{calls("task", taskArgs)}}, dir, d, agent.ApprovalOptions{Decider: askWrite})
			var approvals []agent.Event
			out, err := a.Invoke(t.Context(), userRun("t1", "save"), func(ev agent.Event) {
				if ev.Type == agent.EventApproval {
					approvals = append(approvals, ev)
				}
			})
			done()
			if err != nil || out.Reason != agent.StopApproval {
				t.Fatalf("first run: %v %v", out.Reason, err)
			}
			if len(approvals) != 1 {
				t.Fatalf("approval events: %+v", approvals)
			}
			card, _ := approvals[0].Data.(map[string]any)
			shown, _ := card["approval"].(map[string]any)
			if shown["tool"] != "write_file" || shown["subagent_type"] != "general-purpose" || shown["arguments"] != `{"path":"a"}` ||
				!strings.Contains(card["context"].(string), "general-purpose subagent (tool_policy.rules[0]: writes need a look)") {
				t.Errorf("card %v", card)
			}
			p := out.State.Approvals
			if len(p) != 1 || p[0].Tool != "task" || p[0].Subagent == nil || p[0].Subagent.CallID != "s1" {
				t.Fatalf("pending %+v", p)
			}

			m := &fakeModel{steps: []step{answer("done")}}
			a, done = taskAgent(t, m, dir, d, agent.ApprovalOptions{Decider: askWrite}) // a new process
			defer done()
			out, err = a.Invoke(t.Context(), userRun("t1", tt.answer), nil)
			if err != nil || out.Reason != agent.StopCompleted {
				t.Fatalf("answer run: %v %v", out.Reason, err)
			}
			reqs := d.requests()
			if len(reqs) != 2 || reqs[1].Resume == nil || !cmp.Equal(reqs[1].Resume.Pause, subPause) {
				t.Fatalf("the resumed task was not handed the saved pause: %+v", reqs)
			}
			msgs := m.request(0).Messages
			checkTranscript(t, msgs)
			if got := msgs[len(msgs)-1].Content; got != "Task Succeeded. Result: "+tt.want {
				t.Errorf("the model reads %q", got)
			}
			if len(out.State.Approvals) != 0 || !cmp.Equal(out.State.ApprovalGrants, tt.grants) {
				t.Errorf("pending %+v, grants %+v", out.State.Approvals, out.State.ApprovalGrants)
			}
		})
	}
}

// A run that cannot ask (no human, or asks approved by policy) does not
// relay: the subagent is told so, and no card is made.
func TestApproval_subagentAskIsNotRelayedWithoutAHuman(t *testing.T) {
	tests := []struct {
		name    string
		opts    agent.ApprovalOptions
		context map[string]any
	}{
		{"no human present", agent.ApprovalOptions{Decider: askWrite}, map[string]any{"disable_clarification": true}},
		{"the run is itself a subagent", agent.ApprovalOptions{Decider: askWrite}, map[string]any{"is_subagent": true}},
		{"asks are approved by policy", agent.ApprovalOptions{Decider: askWrite, AskIsAllow: true}, nil},
		{"no policy", agent.ApprovalOptions{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &pausingDelegator{}
			a, done := taskAgent(t, &fakeModel{steps: []step{calls("task", taskArgs), answer("ok")}}, t.TempDir(), d, tt.opts)
			defer done()
			in := userRun("t1", "go")
			in.Context = tt.context
			out, err := a.Invoke(t.Context(), in, nil)
			if err != nil || out.Reason != agent.StopCompleted {
				t.Fatalf("run: %v %v", out.Reason, err)
			}
			if reqs := d.requests(); len(reqs) != 1 || reqs[0].ApprovalRelay {
				t.Errorf("requests %+v", reqs)
			}
		})
	}
}

// A subagent's own middleware pauses with a card when its parent relays
// (and refuses otherwise, TestApproval_noHumanToAsk): the tool never
// runs before the answer.
func TestApproval_subagentPausesWhenItsParentRelays(t *testing.T) {
	rec := &recorder{}
	m := &fakeModel{steps: []step{calls("write_file", `{"path":"a"}`)}}
	in := userRun("t1", "go")
	in.Context = map[string]any{"is_subagent": true, "disable_clarification": true, agent.ContextApprovalRelay: true}
	out, err := approvalAgent(t, m, nil, rec, agent.ApprovalOptions{Decider: askWrite}).Invoke(t.Context(), in, nil)
	if err != nil || out.Reason != agent.StopApproval {
		t.Fatalf("run: %v %v", out.Reason, err)
	}
	if len(rec.ran()) != 0 || len(out.State.Approvals) != 1 || out.State.Approvals[0].Tool != "write_file" {
		t.Errorf("ran %v, pending %+v", rec.ran(), out.State.Approvals)
	}
}
