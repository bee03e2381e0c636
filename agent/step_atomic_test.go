package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// The state updates of one step are applied all or nothing: when a
// reducer rejects the second call's update, the first call's update and
// result are not kept (nor checkpointed) either.
func TestFailedStepLeavesNoHalfAppliedUpdates(t *testing.T) {
	sb := func(id string) *tool.Tool {
		return handlerTool("sb"+id, func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: id}},
				Update: &thread.Update{Sandbox: &thread.Sandbox{SandboxID: id}, Artifacts: []string{"/mnt/user-data/outputs/" + id}}}, nil
		})
	}
	st := openStore(t, t.TempDir())
	defer st.Close()
	m := &fakeModel{steps: []step{calls("sba", `{}`, "sbb", `{}`)}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{sb("a"), sb("b")}, Store: st})
	out, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t1", Messages: []model.Message{model.UserText("x")}}, nil)
	if err == nil {
		t.Fatal("conflict accepted")
	}
	cp, cerr := st.LatestCheckpoint(t.Context(), "t1")
	if cerr != nil {
		t.Fatal(cerr)
	}
	for name, s := range map[string]*thread.State{"outcome": out.State, "checkpoint": cp.State} {
		if s.Sandbox != nil || len(s.Artifacts) != 0 {
			t.Errorf("%s: half-applied step: sandbox %+v, artifacts %v", name, s.Sandbox, s.Artifacts)
		}
		if got := roles(s.Messages); len(got) != 2 || got[1] != string(model.RoleAssistant) {
			t.Errorf("%s: messages %v, want user and the assistant's calls", name, got)
		}
	}
}
