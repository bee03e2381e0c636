package agent_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// A tool may hand Call.Emit to a goroutine that outlives the call (a
// progress callback arriving late). Events sent after the call returned
// are dropped; they must not crash the process.
func TestEmitAfterToolReturnedIsDropped(t *testing.T) {
	release := make(chan struct{})
	var wg sync.WaitGroup
	late := handlerTool("late", func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			for range 50 {
				call.EmitEvent("task_running", map[string]any{"late": true})
			}
		}()
		return tool.Text("started"), nil
	})
	m := &fakeModel{steps: []step{calls("late", `{}`), answer("ok")}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{late}})
	var lateEvents int
	out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("x")}}, func(ev agent.Event) {
		if ev.Type == "task_running" {
			lateEvents++
		}
	})
	close(release)
	wg.Wait()
	if err != nil || out.Reason != agent.StopCompleted {
		t.Fatalf("reason %v, err %v", out.Reason, err)
	}
	if lateEvents != 0 {
		t.Errorf("%d late events delivered", lateEvents)
	}
}
