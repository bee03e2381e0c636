package agent_test

import (
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// As DeerFlow's clarification middleware: with disable_clarification (webhook channels) an
// ask_clarification call gets a normal tool message telling the agent to
// proceed, and the run continues, although the tool is return-direct.
func TestDisabledClarificationContinuesTheRun(t *testing.T) {
	m := &fakeModel{steps: []step{calls("ask_clarification", `{"question":"Which?"}`), answer("went ahead")}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{builtin.AskClarification()},
		ToolMiddlewares: []tool.Middleware{agent.Clarification()}})
	out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("x")},
		Context: map[string]any{"disable_clarification": true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != agent.StopCompleted || m.count() != 2 {
		t.Fatalf("reason %q after %d model calls, want completed after 2", out.Reason, m.count())
	}
	if got := out.State.Messages[2].Content; got != agent.ClarificationDisabledText {
		t.Errorf("tool message %q", got)
	}
}
