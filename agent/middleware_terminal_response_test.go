package agent_test

import (
	"strings"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// empty answers with no text and no calls.
func empty() step {
	return func(*model.Request) ([]model.Event, error) {
		return []model.Event{{Response: &model.Response{Message: model.Message{Role: model.RoleAssistant}, FinishReason: model.FinishStop}}}, nil
	}
}

const terminalFallback = "The model completed the tool run but returned no final response, including after one automatic retry. Please try again or use a different model."

// DeerFlow's terminal-response cases: an empty final answer after tool
// calls is asked for once more with a hidden reminder; a second empty
// answer (or a later one in the same run) becomes the explanation marked
// as an error fallback, and the run ends as error. An empty answer in a
// turn without tool results is left alone.
func TestTerminalResponse(t *testing.T) {
	for _, tc := range []struct {
		name      string
		steps     []step
		wantCalls int
		wantText  string
		wantStop  agent.StopReason
		// reminded lists the model calls (0-based) whose request ends
		// with the reminder.
		reminded []int
	}{
		{"recovered by the retry", []step{calls("echo", `{}`), empty(), answer("Here is the summary.")}, 3,
			"Here is the summary.", agent.StopCompleted, []int{2}},
		{"empty twice", []step{calls("echo", `{}`), empty(), empty()}, 3, terminalFallback, agent.StopError, []int{2}},
		{"the retry calls a tool, then empty again: no second retry",
			[]step{calls("echo", `{}`), empty(), calls("echo", `{}`), empty()}, 4, terminalFallback, agent.StopError, []int{2}},
		{"no tool in the turn", []step{empty()}, 1, "", agent.StopCompleted, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := &fakeModel{steps: tc.steps}
			a := newAgent(t, agent.Options{Model: fm, Tools: []*tool.Tool{textTool("echo", "ok")},
				ModelMiddlewares: []tool.ModelMiddleware{agent.TerminalResponse()}})
			out, err := a.Invoke(t.Context(), agent.Input{RunID: "r1", Messages: []model.Message{model.UserText("summarise")}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fm.count() != tc.wantCalls {
				t.Errorf("model calls = %d, want %d", fm.count(), tc.wantCalls)
			}
			last := lastAssistant(t, out)
			if last.Content != tc.wantText || out.Reason != tc.wantStop {
				t.Errorf("answer %q, stop %s; want %q, %s", last.Content, out.Reason, tc.wantText, tc.wantStop)
			}
			if tc.wantStop == agent.StopError {
				if detail, ok := agent.IsErrorFallback(last); !ok || detail != "Model returned an empty terminal response after one retry" || out.Error != detail {
					t.Errorf("fallback %v %q, outcome error %q", ok, detail, out.Error)
				}
			}
			var reminded []int
			for i := range fm.count() {
				msgs := fm.request(i).Messages
				if m := msgs[len(msgs)-1]; m.Role == model.RoleUser && strings.HasPrefix(m.Content, "<system_reminder>\nYour previous response after the tool execution was empty.") {
					reminded = append(reminded, i)
				}
			}
			if len(reminded) != len(tc.reminded) || (len(reminded) > 0 && reminded[0] != tc.reminded[0]) {
				t.Errorf("reminded calls = %v, want %v", reminded, tc.reminded)
			}
			for _, m := range out.State.Messages {
				if strings.Contains(m.Content, "<system_reminder>") {
					t.Errorf("the reminder was stored: %+v", m)
				}
			}
		})
	}
}
