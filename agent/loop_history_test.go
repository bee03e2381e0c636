package agent_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// TestLoop_stepsDoNotCopyTheHistory: across the steps of a run, the
// tools and the model see the thread's messages in one array that only
// grows (no copy of the history per step), and an append by a tool or a
// middleware to what it was handed never reaches the thread's state or
// a later request.
func TestLoop_stepsDoNotCopyTheHistory(t *testing.T) {
	var mu sync.Mutex
	var toolFirst []*model.Message
	probe := handlerTool("probe", func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		mu.Lock()
		toolFirst = append(toolFirst, &call.State.Messages[0])
		mu.Unlock()
		// A careless tool appends to its snapshot.
		_ = append(call.State.Messages, model.UserText("tool scribble"))
		return tool.Text("ok"), nil
	})
	var reqFirst []*model.Message
	scribble := func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			reqFirst = append(reqFirst, &call.Request.Messages[0])
			// A careless middleware appends to the request it was handed.
			_ = append(call.Request.Messages, model.UserText("middleware scribble"))
			_ = append(call.State.Messages, model.UserText("state scribble"))
			return next(ctx, call)
		}
	}
	m := &fakeModel{steps: []step{calls("probe", `{}`), calls("probe", `{}`), calls("probe", `{}`), answer("done")}}
	a, err := agent.New(agent.Options{Model: m, Tools: []*tool.Tool{probe}, SystemPrompt: "sys",
		ModelMiddlewares: []tool.ModelMiddleware{scribble}})
	if err != nil {
		t.Fatal(err)
	}
	history := historyState(40)
	out, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", State: history,
		Messages: []model.Message{model.UserText("go")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(toolFirst) != 3 || len(reqFirst) != 4 {
		t.Fatalf("tool calls %d, model calls %d", len(toolFirst), len(reqFirst))
	}
	for i := 1; i < len(toolFirst); i++ {
		if toolFirst[i] != toolFirst[0] {
			t.Errorf("tool step %d saw a copy of the history", i+1)
		}
	}
	for i := 1; i < len(reqFirst); i++ {
		if reqFirst[i] != reqFirst[0] {
			t.Errorf("model step %d was sent a copy of the history", i+1)
		}
	}
	// 40 + the input + 3 × (call, result) + the answer; no scribble.
	if got, want := len(out.State.Messages), 40+1+3*2+1; got != want {
		t.Fatalf("state has %d messages, want %d", got, want)
	}
	for _, msg := range out.State.Messages {
		if msg.Role == model.RoleUser && msg.Content != "go" && msg.ID[0] != 'm' {
			t.Errorf("a scribble reached the state: %q", msg.Content)
		}
	}
	last := m.request(3).Messages
	if diff := cmp.Diff(out.State.Messages[:len(out.State.Messages)-1], last[1:]); diff != "" {
		t.Errorf("last request (-state +request):\n%s", diff)
	}
	if len(history.Messages) != 40 {
		t.Errorf("the input state was modified: %d messages", len(history.Messages))
	}
}
