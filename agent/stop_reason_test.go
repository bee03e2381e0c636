package agent_test

import (
	"context"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// A model middleware that caps the run stamps Meta "stop_reason" on the
// final message; the run's done reason is that cap (DeerFlow's subagent limits: the
// subagent limit sets the run's stop_reason = subagent_limit_capped).
func TestFinalMessageStopReasonBecomesTheRunsReason(t *testing.T) {
	for _, reason := range []agent.StopReason{agent.StopLoopCapped, agent.StopSubagentLimitCapped} {
		t.Run(string(reason), func(t *testing.T) {
			stamp := func(next tool.ModelHandler) tool.ModelHandler {
				return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
					resp, err := next(ctx, call)
					if err == nil {
						resp.Message.Meta = map[string]any{"stop_reason": string(reason)}
					}
					return resp, err
				}
			}
			m := &fakeModel{steps: []step{answer("capped")}}
			a := newAgent(t, agent.Options{Model: m, ModelMiddlewares: []tool.ModelMiddleware{stamp}})
			var done agent.Event
			out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("x")}}, func(ev agent.Event) {
				if ev.Type == agent.EventDone {
					done = ev
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != reason || done.Reason != reason {
				t.Errorf("outcome %q, done %q; want %q", out.Reason, done.Reason, reason)
			}
		})
	}
}
