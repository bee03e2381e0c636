package cli

import (
	"strings"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// An enabled token_budget section is implemented, no longer refused:
// `antler run` starts, and a response past the budget ends the run as
// token_capped with its tool call stripped and DeerFlow's exceeded text in
// the answer.
func TestRun_tokenBudgetSectionStartsAndCaps(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{Text: "reading", Usage: &model.Usage{InputTokens: 1100, OutputTokens: 100, TotalTokens: 1200},
			ToolCalls: []model.ToolCall{toolCall("r1", "read_file", `{"description":"read","path":"/mnt/user-data/workspace/a.txt"}`)}},
		modeltest.Turn{Text: "never sent"})
	cfg, home := e2eConfig(t, srv.URL)
	appendFile(t, cfg, "token_budget: {enabled: true, max_tokens: 1000}\n")
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "read a.txt")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if strings.Contains(errOut, "section=token_budget") {
		t.Errorf("token_budget is reported as an ignored section:\n%s", errOut)
	}
	evs := parseEvents(t, out)
	if last := evs[len(evs)-1]; last.Type != "done" || last.Reason != "token_capped" {
		t.Errorf("last event %+v, want done token_capped", last)
	}
	var capped bool
	for _, ev := range evs {
		if ev.Type == "message" && ev.Message != nil && strings.Contains(ev.Message.Content,
			"[TOKEN BUDGET EXCEEDED] The total token usage (1,200) has exceeded the safety limit (1,000).") {
			capped = len(ev.Message.ToolCalls) == 0
		}
		if ev.Type == "tool_start" {
			t.Errorf("a tool ran past the budget: %+v", ev)
		}
	}
	if !capped {
		t.Errorf("no answer with the exceeded text and without tool calls:\n%s", out)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
}
