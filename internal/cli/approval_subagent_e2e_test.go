package cli

import (
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// subagentWriter scripts a lead that delegates to a general-purpose
// subagent which writes a.txt (call s1), then, once that write's replay
// (s1_answered) has its result, writes b.txt (s2), then answers with
// what it saw last; the lead answers with what it saw last. It records
// the subagent's and the lead's requests.
type subagentWriter struct {
	mu        sync.Mutex
	sub, lead []*model.Request
}

func (w *subagentWriter) answer(req *model.Request) modeltest.Turn {
	w.mu.Lock()
	defer w.mu.Unlock()
	isLead := slices.ContainsFunc(req.Tools, func(d model.ToolDefinition) bool { return d.Name == "task" })
	last := req.Messages[len(req.Messages)-1]
	if isLead {
		w.lead = append(w.lead, req)
		if last.Role == model.RoleUser {
			return modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("t1", "task",
				`{"description":"save files","prompt":"save a and b","subagent_type":"general-purpose"}`)}}
		}
		return modeltest.Turn{Text: "lead saw: " + last.Content}
	}
	w.sub = append(w.sub, req)
	switch {
	case last.Role == model.RoleUser:
		return modeltest.Turn{ToolCalls: []model.ToolCall{writeCall("s1", "a.txt")}}
	case last.Role == model.RoleTool && last.ToolCallID == "s1_answered":
		return modeltest.Turn{ToolCalls: []model.ToolCall{writeCall("s2", "b.txt")}}
	}
	return modeltest.Turn{Text: "subagent saw: " + last.Content}
}

func (w *subagentWriter) lastSub() *model.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sub[len(w.sub)-1]
}

func (w *subagentWriter) lastLead() *model.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lead[len(w.lead)-1]
}

// checkEveryCallAnsweredOnce fails unless every tool call of the request
// is answered by exactly one tool message.
func checkEveryCallAnsweredOnce(t *testing.T, who string, req *model.Request) {
	t.Helper()
	answers := map[string]int{}
	for _, m := range req.Messages {
		if m.Role == model.RoleTool {
			answers[m.ToolCallID]++
		}
	}
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			if answers[tc.ID] != 1 {
				t.Errorf("%s: call %s (%s) has %d tool messages, want 1", who, tc.ID, tc.Name, answers[tc.ID])
			}
			delete(answers, tc.ID)
		}
	}
	if len(answers) > 0 {
		t.Errorf("%s: tool messages answer no call: %v", who, answers)
	}
}

// approvalCard returns the data of the run's last approval event.
func approvalCardData(t *testing.T, out string) map[string]any {
	t.Helper()
	var card map[string]any
	for _, ev := range parseEvents(t, out) {
		if ev.Type == "approval" {
			card = ev.Data
		}
	}
	if card == nil {
		t.Fatalf("no approval event: %s", out)
	}
	return card
}

// antler run: a subagent's write_file under an ask rule pauses the
// parent run with a card naming the subagent's call; each answer is a new
// process over the same home (a restart between the pause and the
// answer). Approve writes that file once, and the subagent's next asked
// call pauses again (the approval was for one call); reject does not
// write it and the reason reaches the subagent's model, whose answer
// reaches the lead's. Both transcripts answer every call exactly once.
func TestE2EApproval_subagentCallIsAskedOfTheParentsHuman(t *testing.T) {
	w := &subagentWriter{}
	srv := modeltest.NewScriptServer(t, modeltest.Script{Rules: []modeltest.Rule{{Reply: modeltest.Turn{Func: w.answer}}}})
	cfg, home := approvalConfig(t, srv.URL)
	run := func(args ...string) (int, string, string) {
		return antlerProcess(t, append([]string{"--config", cfg, "--home", home, "run", "--json", "--subagents"}, args...)...)
	}
	absent := func(name string) {
		t.Helper()
		if _, err := os.Stat(outputFile(home, "t1", name)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s was written without an approval: %v", name, err)
		}
	}

	code, out, errOut := run("--thread", "t1", "save via a subagent")
	if code != exitApproval {
		t.Fatalf("exit %d, want %d: %s\n%s", code, exitApproval, errOut, out)
	}
	card := approvalCardData(t, out)
	approval, _ := card["approval"].(map[string]any)
	if approval["tool"] != "write_file" || approval["subagent_type"] != "general-purpose" ||
		!strings.Contains(approval["arguments"].(string), "a.txt") || approval["rule"] != "tool_policy.rules[0]" {
		t.Errorf("the card does not name the subagent's call: %v", card)
	}
	if c, _ := card["context"].(string); !strings.Contains(c, "general-purpose subagent") {
		t.Errorf("card context %q", c)
	}
	absent("a.txt")
	if !strings.Contains(errOut, "write_file of the general-purpose subagent (call t1) waits for approval") {
		t.Errorf("stderr does not name the subagent's call: %s", errOut)
	}

	code, out, errOut = run("--thread", "t1", "--approve")
	if code != exitApproval {
		t.Fatalf("--approve: exit %d, want %d (the second write asks again): %s\n%s", code, exitApproval, errOut, out)
	}
	if data, err := os.ReadFile(outputFile(home, "t1", "a.txt")); err != nil || string(data) != "hi" {
		t.Errorf("approved file: %q %v", data, err)
	}
	absent("b.txt")
	approval, _ = approvalCardData(t, out)["approval"].(map[string]any)
	if !strings.Contains(approval["arguments"].(string), "b.txt") {
		t.Errorf("second card %v", approval)
	}

	code, out, errOut = run("--thread", "t1", "--reject", "not b")
	if code != 0 {
		t.Fatalf("--reject: exit %d: %s\n%s", code, errOut, out)
	}
	absent("b.txt")
	sub := w.lastSub()
	if m := toolMessage([]*model.Request{sub}, "s2_answered"); m == nil ||
		m.Content != "Error: the user rejected this call to write_file; it did not run. The user's reason: not b" {
		t.Errorf("the subagent's model did not read the rejection: %+v", m)
	}
	if m := toolMessage([]*model.Request{sub}, "s1_answered"); m == nil || m.Content != "OK" {
		t.Errorf("the subagent's approved write: %+v", m)
	}
	if got := finalAnswer(t, out); !strings.HasPrefix(got, "lead saw: ") || !strings.Contains(got, "subagent saw: Error: the user rejected") {
		t.Errorf("the lead's model did not read the subagent's result: %q", got)
	}
	checkEveryCallAnsweredOnce(t, "subagent", sub)
	checkEveryCallAnsweredOnce(t, "lead", w.lastLead())
	writes := 0
	for _, m := range sub.Messages {
		if m.Role == model.RoleTool && m.Content == "OK" {
			writes++
		}
	}
	if writes != 1 {
		t.Errorf("the subagent's transcript holds %d written files, want 1", writes)
	}
}

// "approve for this thread" on a subagent's card grants the subagent's
// tool and rule on the parent thread: its next write_file runs without
// asking, and the task completes in the same run.
func TestE2EApproval_subagentApproveForThisThreadHoldsForItsNextCall(t *testing.T) {
	w := &subagentWriter{}
	srv := modeltest.NewScriptServer(t, modeltest.Script{Rules: []modeltest.Rule{{Reply: modeltest.Turn{Func: w.answer}}}})
	cfg, home := approvalConfig(t, srv.URL)
	run := func(args ...string) (int, string, string) {
		return antlerProcess(t, append([]string{"--config", cfg, "--home", home, "run", "--json", "--subagents"}, args...)...)
	}
	if code, out, errOut := run("--thread", "t1", "save via a subagent"); code != exitApproval {
		t.Fatalf("exit %d, want %d: %s\n%s", code, exitApproval, errOut, out)
	}
	code, out, errOut := run("--thread", "t1", "--approve-for-thread")
	if code != 0 {
		t.Fatalf("--approve-for-thread: exit %d: %s\n%s", code, errOut, out)
	}
	for _, name := range []string{"a.txt", "b.txt"} {
		if data, err := os.ReadFile(outputFile(home, "t1", name)); err != nil || string(data) != "hi" {
			t.Errorf("%s: %q %v", name, data, err)
		}
	}
	if got := finalAnswer(t, out); !strings.Contains(got, "subagent saw: OK") {
		t.Errorf("the lead's model did not read the subagent's result: %q", got)
	}
	checkEveryCallAnsweredOnce(t, "subagent", w.lastSub())
	checkEveryCallAnsweredOnce(t, "lead", w.lastLead())
}

// postSubagentRun is postRun with subagents enabled in the run context,
// as DeerFlow's frontend sends it.
func postSubagentRun(t *testing.T, url, thread string, message map[string]any) string {
	t.Helper()
	return postRunWith(t, url, thread, message, map[string]any{"subagent_enabled": true})
}

// antler serve: a subagent's asked call is the clarification card of the
// parent's stream (the same shape as the lead's, naming the subagent);
// after the server restarts, the frontend's "approve" writes the file
// and the lead's model reads the subagent's result.
func TestE2EApproval_serveRelaysASubagentsCardAcrossARestart(t *testing.T) {
	w := &subagentWriter{}
	srv := modeltest.NewScriptServer(t, modeltest.Script{Rules: []modeltest.Rule{{Reply: modeltest.Turn{Func: w.answer}}}})
	cfg, home := approvalConfig(t, srv.URL)
	url, stop := startServe(t, nil, "--config", cfg, "--home", home)
	stream := postSubagentRun(t, url, "t1", map[string]any{"type": "human", "content": "save via a subagent"})
	stop()
	for _, want := range []string{`"name":"ask_clarification"`, `"id":"approval:t1"`, `"source":"tool_approval"`,
		`"subagent_type":"general-purpose"`, `"tool":"write_file"`, "general-purpose subagent", "writes need a look"} {
		if !strings.Contains(stream, want) {
			t.Errorf("the stream lacks %s", want)
		}
	}
	if _, err := os.Stat(outputFile(home, "t1", "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file was written before the approval: %v", err)
	}

	url, stop = startServe(t, nil, "--config", cfg, "--home", home) // a restart
	defer stop()
	stream = postSubagentRun(t, url, "t1", cardAnswer("approval:t1", "approve for this thread"))
	for _, name := range []string{"a.txt", "b.txt"} {
		if data, err := os.ReadFile(outputFile(home, "t1", name)); err != nil || string(data) != "hi" {
			t.Errorf("%s: %q %v", name, data, err)
		}
	}
	if !strings.Contains(stream, "lead saw: Task Succeeded. Result: subagent saw: OK") {
		t.Errorf("the lead's model did not read the subagent's result:\n%s", stream)
	}
}
