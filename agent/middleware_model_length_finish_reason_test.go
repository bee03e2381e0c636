package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// respond answers with a prepared response.
func respond(resp model.Response) step {
	return func(*model.Request) ([]model.Event, error) { return []model.Event{{Response: &resp}}, nil }
}

// A final answer the provider cut at its output limit ends the run as
// model_length_capped with its text unchanged (DeerFlow's three
// detectors); answers with tool calls, without text, or ended normally
// are left alone.
func TestModelLengthFinishReason(t *testing.T) {
	text := func(s string, meta map[string]any) model.Response {
		return model.Response{Message: model.Message{Role: model.RoleAssistant, Content: s}, Metadata: meta}
	}
	withCall := text("writing", map[string]any{model.MetaFinishReason: "length"})
	withCall.Message.ToolCalls = []model.ToolCall{{ID: "c1", Name: "echo", Arguments: json.RawMessage(`{}`)}}
	rawCall := text("writing", map[string]any{model.MetaFinishReason: "length"})
	rawCall.Message.Meta = map[string]any{"tool_calls": []any{map[string]any{"id": "x"}}}
	capped := text("cut", map[string]any{model.MetaFinishReason: "length"})
	capped.Message.Meta = map[string]any{"stop_reason": string(agent.StopLoopCapped)}
	for _, tc := range []struct {
		name  string
		steps []step
		want  agent.StopReason
	}{
		{"openai finish_reason length", []step{respond(text("The report is cut he", map[string]any{model.MetaFinishReason: "length"}))}, agent.StopModelLengthCapped},
		{"case does not matter", []step{respond(text("cut", map[string]any{model.MetaFinishReason: "LENGTH"}))}, agent.StopModelLengthCapped},
		{"anthropic stop_reason max_tokens", []step{respond(text("cut", map[string]any{model.MetaStopReason: "max_tokens"}))}, agent.StopModelLengthCapped},
		{"gemini MAX_TOKENS", []step{respond(text("cut", map[string]any{model.MetaFinishReason: "MAX_TOKENS"}))}, agent.StopModelLengthCapped},
		{"a reason passed through in Meta", []step{respond(model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "cut",
			Meta: map[string]any{model.MetaFinishReason: "length"}}})}, agent.StopModelLengthCapped},
		{"a normal stop", []step{respond(text("whole", map[string]any{model.MetaFinishReason: "stop"}))}, agent.StopCompleted},
		{"no metadata", []step{answer("whole")}, agent.StopCompleted},
		{"no visible text", []step{respond(text("  ", map[string]any{model.MetaFinishReason: "length"}))}, agent.StopCompleted},
		{"tool calls run", []step{respond(withCall), answer("done")}, agent.StopCompleted},
		{"raw provider calls", []step{respond(rawCall)}, agent.StopCompleted},
		{"an earlier cap wins", []step{respond(capped)}, agent.StopLoopCapped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := &fakeModel{steps: tc.steps}
			a := newAgent(t, agent.Options{Model: fm, Tools: []*tool.Tool{textTool("echo", "ok")},
				ModelMiddlewares: []tool.ModelMiddleware{agent.ModelLengthFinishReason()}})
			out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("write")}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != tc.want {
				t.Errorf("stop reason = %s, want %s", out.Reason, tc.want)
			}
			if tc.want == agent.StopModelLengthCapped {
				evs, _ := tc.steps[0](nil)
				if got := lastAssistant(t, out).Content; got != evs[0].Response.Message.Content {
					t.Errorf("the answer was changed: %q", got)
				}
			}
		})
	}
}
