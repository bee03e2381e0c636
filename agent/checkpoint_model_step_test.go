package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// The model step is checkpointed before its tools run (as LangGraph's
// model node), so a process that dies during a long tool call keeps the
// assistant's answer and its usage.
func TestModelStepCheckpointedBeforeToolsRun(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	var seen []string
	probe := handlerTool("probe", func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		cp, err := s.LatestCheckpoint(ctx, call.ThreadID)
		if err != nil {
			return nil, err
		}
		seen = roles(cp.State.Messages)
		return tool.Text("ok"), nil
	})
	m := &fakeModel{steps: []step{calls("probe", `{}`), answer("done")}}
	a := newAgent(t, agent.Options{Model: m, Tools: []*tool.Tool{probe}, Store: s})
	if _, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t", Messages: []model.Message{model.UserText("x")}}, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"user", "assistant"}, seen); diff != "" {
		t.Errorf("checkpoint while the tool ran (-want +got):\n%s", diff)
	}
}
