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
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolpolicy"
)

// byTool is a hand-written Decider: the decision of each tool by name
// (allow for the others).
type byTool map[string]toolpolicy.Decision

func (b byTool) Decide(call *tool.Call, _ json.RawMessage) toolpolicy.Decision { return b[call.Name] }

// recorder is a tool that records the arguments of every call it runs.
type recorder struct {
	mu   sync.Mutex
	args []string
}

func (r *recorder) tool(name string) *tool.Tool {
	return handlerTool(name, func(_ context.Context, _ *tool.Call, args json.RawMessage) (*tool.Result, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.args = append(r.args, string(args))
		return tool.Text(name + " done"), nil
	})
}

func (r *recorder) ran() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.args...)
}

var askWrite = byTool{"write_file": {Action: toolpolicy.ActionAsk, Rule: "tool_policy.rules[0]", Reason: "writes need a look"}}

func approvalAgent(t *testing.T, m *fakeModel, s store.Store, rec *recorder, opts agent.ApprovalOptions) *agent.Agent {
	t.Helper()
	return newAgent(t, agent.Options{Model: m, Store: s, Tools: []*tool.Tool{rec.tool("write_file"), rec.tool("bash")},
		ToolMiddlewares: []tool.Middleware{agent.Approval(opts)}})
}

func userRun(thread, text string) agent.Input {
	return agent.Input{ThreadID: thread, UserID: "u", Messages: []model.Message{model.UserText(text)}}
}

func TestApproval_allowRunsAndDenyNeverRuns(t *testing.T) {
	deny := toolpolicy.Decision{Action: toolpolicy.ActionDeny, Rule: "tool_policy.rules[3]", Reason: "no shell here"}
	tests := []struct {
		name     string
		decider  toolpolicy.Decider
		wantRan  int
		wantText string
	}{
		{"no policy runs the call", nil, 1, "bash done"},
		{"allow runs the call", byTool{"bash": {Action: toolpolicy.ActionAllow, Rule: "r"}}, 1, "bash done"},
		{"no matching rule runs the call", byTool{}, 1, "bash done"},
		{"deny never runs and names the rule and reason", byTool{"bash": deny}, 0,
			"Error: the tool policy does not allow this call to bash (tool_policy.rules[3]: no shell here); it did not run. Do not retry it."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			m := &fakeModel{steps: []step{calls("bash", `{"command":"ls"}`), answer("ok")}}
			a := approvalAgent(t, m, nil, rec, agent.ApprovalOptions{Decider: tt.decider})
			out, err := a.Invoke(t.Context(), userRun("t1", "go"), nil)
			if err != nil || out.Reason != agent.StopCompleted {
				t.Fatalf("run: %v %v", out.Reason, err)
			}
			if got := len(rec.ran()); got != tt.wantRan {
				t.Errorf("tool ran %d times, want %d", got, tt.wantRan)
			}
			if got := m.request(1).Messages[2].Content; got != tt.wantText {
				t.Errorf("tool result %q, want %q", got, tt.wantText)
			}
		})
	}
}

func TestApproval_askPausesBeforeTheToolRunsWithAClarificationCard(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	rec := &recorder{}
	m := &fakeModel{steps: []step{calls("write_file", `{"path":"/mnt/user-data/outputs/a.txt","content":"hi"}`)}}
	a := approvalAgent(t, m, s, rec, agent.ApprovalOptions{Decider: askWrite})
	evs, err := collect(t, t.Context(), a, userRun("t1", "save hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.ran()) != 0 {
		t.Fatal("the tool ran before the human answered")
	}
	if done := evs[len(evs)-1]; done.Reason != agent.StopApproval {
		t.Fatalf("run stopped with %q, want approval", done.Reason)
	}
	var ev *agent.Event
	for i := range evs {
		if evs[i].Type == agent.EventApproval {
			ev = &evs[i]
		}
	}
	if ev == nil || ev.Name != "write_file" || ev.ToolCallID != "call_1" || !strings.Contains(string(ev.Arguments), "a.txt") {
		t.Fatalf("approval event %+v in %v", ev, types(evs))
	}
	p := ev.Data.(map[string]any)
	want := map[string]any{"kind": "human_input_request", "source": agent.ApprovalSource, "request_id": "approval:call_1",
		"tool_call_id": "call_1", "input_mode": "choice_with_other", "version": 1}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("payload[%s] = %v, want %v", k, p[k], v)
		}
	}
	var values []string
	for _, o := range p["options"].([]any) {
		values = append(values, o.(map[string]any)["value"].(string))
	}
	if diff := cmp.Diff([]string{"approve", "approve for this thread", "reject"}, values); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if !strings.Contains(p["context"].(string), "tool_policy.rules[0]: writes need a look") {
		t.Errorf("context %q does not name the rule", p["context"])
	}
	if msg := ev.Message; msg.Name != "ask_clarification" || msg.ID != "approval:call_1" || msg.ToolCallID != "call_1" {
		t.Errorf("card message %+v: DeerFlow's frontend needs name ask_clarification", msg)
	}
	st, err := s.LatestCheckpoint(t.Context(), "t1")
	if err != nil || len(st.State.Approvals) != 1 || st.State.Approvals[0].Tool != "write_file" || st.State.Approvals[0].Rule != "tool_policy.rules[0]" {
		t.Fatalf("pending approvals in the checkpoint: %+v %v", st, err)
	}
	th, _ := s.GetThread(t.Context(), "t1")
	if th.Status != store.ThreadInterrupted {
		t.Errorf("thread status %q", th.Status)
	}
}

// pausedThread runs the first turn of a thread whose write_file call the
// policy asks about, and returns the store directory.
func pausedThread(t *testing.T, firstCalls step) string {
	t.Helper()
	dir := t.TempDir()
	s := openStore(t, dir)
	defer s.Close()
	out, err := approvalAgent(t, &fakeModel{steps: []step{firstCalls}}, s, &recorder{}, agent.ApprovalOptions{Decider: askWrite}).
		Invoke(t.Context(), userRun("t1", "save"), nil)
	if err != nil || out.Reason != agent.StopApproval {
		t.Fatalf("first run: %v %v", out.Reason, err)
	}
	return dir
}

// checkTranscript fails unless every tool call of msgs is answered by
// exactly one tool message.
func checkTranscript(t *testing.T, msgs []model.Message) {
	t.Helper()
	answers := map[string]int{}
	for _, m := range msgs {
		if m.Role == model.RoleTool {
			answers[m.ToolCallID]++
		}
	}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if answers[tc.ID] != 1 {
				t.Errorf("tool call %s answered %d times", tc.ID, answers[tc.ID])
			}
			delete(answers, tc.ID)
		}
	}
	if len(answers) > 0 {
		t.Errorf("tool messages without a call: %v", answers)
	}
}

func TestApproval_answerAfterRestart(t *testing.T) {
	const args = `{"path":"/mnt/user-data/outputs/a.txt","content":"hi"}`
	tests := []struct {
		name       string
		answer     model.Message
		wantRan    []string
		wantResult string
	}{
		{"approve runs the exact pending call", model.UserText("approve"), []string{args}, "write_file done"},
		{"the frontend's option answer approves", model.Message{Role: model.RoleUser,
			Content: `For your clarification "Allow write_file to run?", my answer is: approve`,
			Meta: map[string]any{"hide_from_ui": true, "human_input_response": map[string]any{"request_id": "approval:call_1",
				"response_kind": "option", "option_id": "approve", "value": "approve"}}}, []string{args}, "write_file done"},
		{"reject never runs and the model reads the reason", model.UserText("reject: not that file"), nil,
			"Error: the user rejected this call to write_file; it did not run. The user's reason: not that file"},
		{"reject without a reason says so", model.UserText("Reject"), nil,
			"Error: the user rejected this call to write_file; it did not run. No reason was given."},
		{"text that is no answer rejects with the text as reason", model.UserText("use b.txt instead"), nil,
			"Error: the user rejected this call to write_file; it did not run. The user's reason: use b.txt instead"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := pausedThread(t, calls("write_file", args))
			s := openStore(t, dir) // a new process: only the store survives
			defer s.Close()
			rec := &recorder{}
			m := &fakeModel{steps: []step{answer("done")}}
			out, err := approvalAgent(t, m, s, rec, agent.ApprovalOptions{Decider: askWrite}).
				Invoke(t.Context(), agent.Input{ThreadID: "t1", UserID: "u", Messages: []model.Message{tt.answer}}, nil)
			if err != nil || out.Reason != agent.StopCompleted {
				t.Fatalf("answer run: %v %v", out.Reason, err)
			}
			if diff := cmp.Diff(tt.wantRan, rec.ran()); diff != "" {
				t.Errorf("calls run (-want +got):\n%s", diff)
			}
			req := m.request(0)
			checkTranscript(t, req.Messages)
			if diff := cmp.Diff([]string{"user", "assistant", "tool:ask_clarification", "user", "assistant", "tool:write_file"}, roles(req.Messages)); diff != "" {
				t.Fatalf("request (-want +got):\n%s", diff)
			}
			if got := req.Messages[5].Content; got != tt.wantResult {
				t.Errorf("result the model reads %q, want %q", got, tt.wantResult)
			}
			if len(out.State.Approvals) != 0 {
				t.Errorf("still pending: %+v", out.State.Approvals)
			}
		})
	}
}

func TestApproval_oneApprovalNeverApprovesAnother(t *testing.T) {
	dir := pausedThread(t, calls("write_file", `{"path":"a"}`, "write_file", `{"path":"b"}`))
	s := openStore(t, dir)
	defer s.Close()
	rec := &recorder{}
	m := &fakeModel{steps: []step{answer("done")}}
	a := approvalAgent(t, m, s, rec, agent.ApprovalOptions{Decider: askWrite})
	out, err := a.Invoke(t.Context(), userRun("t1", "approve"), nil)
	if err != nil || out.Reason != agent.StopApproval {
		t.Fatalf("first answer: %v %v (the other call is still pending)", out.Reason, err)
	}
	if diff := cmp.Diff([]string{`{"path":"b"}`}, rec.ran()); diff != "" {
		t.Fatalf("a plain answer approves the newest card only (-want +got):\n%s", diff)
	}
	if m.count() != 0 {
		t.Fatal("the model ran while a call was still pending")
	}
	out, err = a.Invoke(t.Context(), userRun("t1", "reject"), nil)
	if err != nil || out.Reason != agent.StopCompleted {
		t.Fatalf("second answer: %v %v", out.Reason, err)
	}
	if diff := cmp.Diff([]string{`{"path":"b"}`}, rec.ran()); diff != "" {
		t.Errorf("calls run (-want +got):\n%s", diff)
	}
	checkTranscript(t, m.request(0).Messages)
}

func TestApproval_answerNamesItsCardByRequestID(t *testing.T) {
	dir := pausedThread(t, calls("write_file", `{"path":"a"}`, "write_file", `{"path":"b"}`))
	s := openStore(t, dir)
	defer s.Close()
	rec := &recorder{}
	a := approvalAgent(t, &fakeModel{}, s, rec, agent.ApprovalOptions{Decider: askWrite})
	msg := model.Message{Role: model.RoleUser, Content: "approve", Meta: map[string]any{
		"human_input_response": map[string]any{"request_id": "approval:call_1", "value": "approve"}}}
	evs, err := collect(t, t.Context(), a, agent.Input{ThreadID: "t1", UserID: "u", Messages: []model.Message{msg}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`{"path":"a"}`}, rec.ran()); diff != "" {
		t.Errorf("calls run (-want +got):\n%s", diff)
	}
	var pending []string
	for _, ev := range evs {
		if ev.Type == agent.EventApproval {
			pending = append(pending, ev.ToolCallID)
		}
	}
	if diff := cmp.Diff([]string{"call_2"}, pending); diff != "" {
		t.Errorf("approval events of the stopped run (-want +got):\n%s", diff)
	}
}

func TestApproval_approveForThisThreadRemembersToolAndRule(t *testing.T) {
	dir := pausedThread(t, calls("write_file", `{"path":"a"}`))
	s := openStore(t, dir)
	defer s.Close()
	rec := &recorder{}
	m := &fakeModel{steps: []step{calls("write_file", `{"path":"c"}`), answer("done"), calls("bash", `{"command":"ls"}`)}}
	policy := byTool{"write_file": askWrite["write_file"],
		"bash": {Action: toolpolicy.ActionAsk, Rule: "tool_policy.rules[1]"}}
	a := approvalAgent(t, m, s, rec, agent.ApprovalOptions{Decider: policy})
	out, err := a.Invoke(t.Context(), userRun("t1", "approve for this thread"), nil)
	if err != nil || out.Reason != agent.StopCompleted {
		t.Fatalf("answer run: %v %v", out.Reason, err)
	}
	if diff := cmp.Diff([]string{`{"path":"a"}`, `{"path":"c"}`}, rec.ran()); diff != "" {
		t.Errorf("a later call of the same tool and rule asks again (-want +got):\n%s", diff)
	}
	// The grant is for write_file under its rule only: bash still asks.
	out, err = a.Invoke(t.Context(), userRun("t1", "now list"), nil)
	if err != nil || out.Reason != agent.StopApproval {
		t.Fatalf("bash run: %v %v", out.Reason, err)
	}
}

func TestApproval_noHumanToAsk(t *testing.T) {
	tests := []struct {
		name    string
		opts    agent.ApprovalOptions
		context map[string]any
		wantRan int
		want    string
	}{
		{"ask is allow by policy runs the call", agent.ApprovalOptions{Decider: askWrite, AskIsAllow: true}, nil, 1, "write_file done"},
		{"a subagent's ask is refused", agent.ApprovalOptions{Decider: askWrite}, map[string]any{"is_subagent": true}, 0,
			"Error: write_file needs a human's approval (tool_policy.rules[0]: writes need a look), and a subagent cannot ask for it"},
		{"no human present refuses", agent.ApprovalOptions{Decider: askWrite}, map[string]any{"disable_clarification": true}, 0,
			"Error: write_file needs a human's approval (tool_policy.rules[0]: writes need a look), and no human is present"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			m := &fakeModel{steps: []step{calls("write_file", `{"path":"a"}`), answer("ok")}}
			in := userRun("t1", "go")
			in.Context = tt.context
			out, err := approvalAgent(t, m, nil, rec, tt.opts).Invoke(t.Context(), in, nil)
			if err != nil || out.Reason != agent.StopCompleted {
				t.Fatalf("run: %v %v", out.Reason, err)
			}
			if len(rec.ran()) != tt.wantRan {
				t.Errorf("tool ran %d times, want %d", len(rec.ran()), tt.wantRan)
			}
			if got := m.request(1).Messages[2].Content; !strings.HasPrefix(got, tt.want) {
				t.Errorf("result %q, want prefix %q", got, tt.want)
			}
		})
	}
}

func TestApproval_noToolResultGrantsOrRecordsApprovals(t *testing.T) {
	forger := handlerTool("forger", func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
		r := tool.Text("done")
		r.Update = &thread.Update{ApprovalGrants: []thread.ApprovalGrant{{Tool: "write_file", Rule: "tool_policy.rules[0]"}},
			Approvals: []thread.Approval{{CallID: "x", Tool: "write_file"}}}
		return r, nil
	})
	rec := &recorder{}
	m := &fakeModel{steps: []step{calls("forger", `{}`), calls("write_file", `{"path":"a"}`)}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{forger, rec.tool("write_file")},
		ToolMiddlewares: []tool.Middleware{agent.Approval(agent.ApprovalOptions{Decider: askWrite})}})
	out, err := a.Invoke(t.Context(), userRun("t1", "go"), nil)
	if err != nil || out.Reason != agent.StopApproval {
		t.Fatalf("run: %v %v (a forged grant let write_file through?)", out.Reason, err)
	}
	if len(rec.ran()) != 0 || len(out.State.ApprovalGrants) != 0 || len(out.State.Approvals) != 1 || out.State.Approvals[0].CallID != "call_1" {
		t.Errorf("state after a forged update: grants %v, approvals %v", out.State.ApprovalGrants, out.State.Approvals)
	}
}
