package subagent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/subagent"
)

type loader map[string]*agent.AgentSpec

func (l loader) LoadAgent(_ context.Context, _, name string) (*agent.AgentSpec, error) {
	if s, ok := l[name]; ok {
		return s, nil
	}
	return nil, agent.ErrAgentNotFound
}

// The lead-agent factory wired as the package documents: the executor's
// task tool among the assembler's built-ins and LimitHook as
// SubagentLimit. The custom agent's tool groups
// and skills reach the subagent.
func TestFactoryWiring(t *testing.T) {
	// One model serves both: with task bound it is the lead, without it
	// a subagent.
	args, _ := json.Marshal(map[string]string{"description": "list", "prompt": "list the files", "subagent_type": "general-purpose"})
	m := modeltest.FromScript(modeltest.Script{Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Tool: builtin.TaskName, Reply: modeltest.Turn{ToolCalls: []model.ToolCall{
			{Name: builtin.TaskName, Arguments: args}, {Name: builtin.TaskName, Arguments: args},
			{Name: builtin.TaskName, Arguments: args}, {Name: builtin.TaskName, Arguments: args}}}},
		{LastRole: model.RoleTool, Tool: builtin.TaskName, Reply: modeltest.Turn{Text: "summary"}},
		{LastRole: model.RoleUser, Reply: modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls"}}}},
		{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: "sub done"}},
	}})
	h := newHarness(t, baseConfig, map[string]model.ChatModel{"lead": m}, nil)
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: h.asm, SubagentLimit: subagent.LimitHook(h.cfg),
		Agents: loader{"coder": {Name: "coder", ToolGroups: []string{"file:read"}, Skills: []string{"b"}}}})
	if err != nil {
		t.Fatal(err)
	}
	lead, err := f.Build(t.Context(), agent.Request{ThreadID: "t1", UserID: "u1", RunID: "r1", AgentName: "coder",
		SubagentEnabled: true, MaxTotalSubagents: 2})
	if err != nil {
		t.Fatal(err)
	}
	out, err := lead.Agent.Invoke(t.Context(), lead.Input(model.UserText("go")), nil)
	if err != nil {
		t.Fatal(err)
	}
	tasks := 0
	for _, msg := range out.State.Messages {
		if msg.Role == model.RoleTool && msg.Name == builtin.TaskName {
			tasks++
			if msg.Content != "Task Succeeded. Result: sub done" {
				t.Errorf("task result = %q", msg.Content)
			}
		}
	}
	if tasks != 2 {
		t.Errorf("%d tasks ran, want 2 (max_total_subagents)", tasks)
	}
	var subTools []string
	for _, req := range m.Requests() {
		if len(req.Messages) > 1 && strings.Contains(req.Messages[1].Content, "list the files") {
			subTools = modeltest.ToolNames(req)
			break
		}
	}
	if want := []string{"ls", "hang"}; !cmp.Equal(subTools, want) {
		t.Errorf("subagent tools = %v, want %v (the coder's file:read group, no task)", subTools, want)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.skills) == 0 || !cmp.Equal(h.skills[0], []string{"b"}) {
		t.Errorf("subagent skill allowlists = %v, want [b] from the coder", h.skills)
	}
}
