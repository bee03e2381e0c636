package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// budgetLead builds the lead agent of yaml over the scripted model m,
// with an ls tool.
func budgetLead(t *testing.T, yaml string, m *modeltest.Model) *agent.Lead {
	t.Helper()
	cfg, err := config.Parse("config.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	reg := toolset.NewRegistry()
	reg.RegisterModel(func(context.Context, *toolset.Env, config.Model) (model.ChatModel, error) { return m, nil }, "test:model")
	reg.RegisterTool(func(context.Context, *toolset.Env, config.ToolEntry) (*tool.Tool, error) {
		return textTool("ls", "a.txt"), nil
	}, "test:ls")
	asm := &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: cfg},
		Builtins: toolset.Builtins{AskClarification: builtin.AskClarification()}}
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm})
	if err != nil {
		t.Fatal(err)
	}
	lead, err := f.Build(t.Context(), agent.Request{ThreadID: "t", UserID: "u", RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	return lead
}

const budgetLeadConfig = `
models:
  - name: scripted
    use: test:model
    model: scripted
tools:
  - name: ls
    group: file:read
    use: test:ls
loop_detection:
  enabled: false
token_budget:
  enabled: true
  max_tokens: 10000
`

// A lead run crosses the warning (the next request carries the
// budget_warning message) and then the hard stop (the tool call is
// stripped, the answer ends with the exceeded text, and the run stops
// as token_capped).
func TestLeadTokenBudget_warnsThenCapsTheRun(t *testing.T) {
	ls := []model.ToolCall{{ID: "c1", Name: "ls", Arguments: []byte(`{}`)}}
	m := modeltest.New(
		modeltest.Turn{Text: "looking", ToolCalls: ls, Usage: &model.Usage{InputTokens: 8000, OutputTokens: 500}},
		modeltest.Turn{Text: "still looking", ToolCalls: []model.ToolCall{{ID: "c2", Name: "ls", Arguments: []byte(`{}`)}},
			Usage: &model.Usage{InputTokens: 1400, OutputTokens: 200}},
		modeltest.Turn{Text: "never sent"})
	lead := budgetLead(t, budgetLeadConfig, m)
	if !slices.Contains(lead.ModelMiddlewares, "token_budget") {
		t.Fatalf("model middlewares %v lack token_budget", lead.ModelMiddlewares)
	}
	out, err := lead.Agent.Invoke(t.Context(), lead.Input(model.UserText("list the files")), nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2 (the hard stop ends the run)", len(reqs))
	}
	if w := warnings(reqs[0]); len(w) != 0 {
		t.Errorf("first request carries %q", w)
	}
	last := modeltest.LastMessage(reqs[1])
	if last.Name != agent.TokenBudgetWarningName || last.Role != model.RoleUser ||
		!strings.HasPrefix(last.Content, "[TOKEN BUDGET WARNING] You have used 8,500 of your 10,000 total token budget (85%).") {
		t.Errorf("second request ends with %+v, want the budget warning", last)
	}
	if out.Reason != agent.StopTokenCapped {
		t.Errorf("stop reason %q, want token_capped", out.Reason)
	}
	answer := out.State.Messages[len(out.State.Messages)-1]
	want := "still looking\n\n[TOKEN BUDGET EXCEEDED] The total token usage (10,100) has exceeded the safety limit (10,000). " +
		"Producing final answer with results collected so far."
	if answer.Role != model.RoleAssistant || answer.Content != want || len(answer.ToolCalls) != 0 {
		t.Errorf("answer = %+v, want %q without tool calls", answer, want)
	}
	for _, msg := range out.State.Messages {
		if msg.Name == agent.TokenBudgetWarningName {
			t.Errorf("the warning reached the thread state: %+v", msg)
		}
	}
}

// A disabled section (DeerFlow's default) adds no budget to the lead.
func TestLeadTokenBudget_offByDefault(t *testing.T) {
	yaml := strings.Replace(budgetLeadConfig, "enabled: true\n  max_tokens", "enabled: false\n  max_tokens", 1)
	lead := budgetLead(t, yaml, modeltest.New(modeltest.Turn{Text: "hi"}))
	if slices.Contains(lead.ModelMiddlewares, "token_budget") {
		t.Errorf("model middlewares %v hold token_budget with the section off", lead.ModelMiddlewares)
	}
}
