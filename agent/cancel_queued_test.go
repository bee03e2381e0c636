package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// Calls still waiting for a concurrency slot when the run is cancelled
// never start: their handlers do not run and no tool_start is emitted.
func TestCancellationSkipsQueuedToolCalls(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var ran atomic.Int32
	h := func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		ran.Add(1)
		if call.ID == "call_1" {
			cancel()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return tool.Text("ran anyway"), nil
	}
	m := &fakeModel{steps: []step{calls("t", `{}`, "t", `{}`, "t", `{}`)}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{handlerTool("t", h)}, ToolConcurrency: 1})
	starts := 0
	_, err := a.Invoke(ctx, agent.Input{Messages: []model.Message{model.UserText("x")}}, func(ev agent.Event) {
		if ev.Type == agent.EventToolStart {
			starts++
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if n := ran.Load(); n != 1 || starts != 1 {
		t.Errorf("%d handlers ran, %d tool_start events; want 1 and 1", n, starts)
	}
}
