package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/tool"
)

// fakeDelegator runs every task at once with a fixed result.
type fakeDelegator struct {
	result builtin.TaskResult
}

func (d *fakeDelegator) ResolveTask(subagentType, parentModel string) (builtin.TaskType, error) {
	return builtin.TaskType{Name: subagentType, ModelName: d.result.ModelName}, nil
}

func (d *fakeDelegator) Delegate(ctx context.Context, req builtin.TaskRequest, progress func(builtin.TaskProgress)) (builtin.TaskResult, error) {
	return d.result, nil
}

func usage(in, out int64) *model.Usage {
	return &model.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}

// TestRunUsageRecorded runs a turn that summarises the thread, delegates a
// subagent task, answers and gets a title: the run's record charges the
// loop's calls to lead_agent, the task's usage to subagent and the title
// and summary calls to middleware, each under its model's name, while the
// loop's own usage stays the lead agent's.
func TestRunUsageRecorded(t *testing.T) {
	taskArgs, _ := json.Marshal(map[string]string{"description": "look", "prompt": "look it up", "subagent_type": "general-purpose"})
	lead := agent.NamedModel("lead", modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{Name: builtin.TaskName, Arguments: taskArgs}}, Usage: usage(100, 20)},
		modeltest.Turn{Text: "Found it.", Usage: usage(30, 5)},
	))
	titler := agent.NamedModel("titler", modeltest.New(modeltest.Turn{Text: "Looking", Usage: usage(7, 3)}))
	summarizer := agent.NamedModel("summ", modeltest.New(modeltest.Turn{Text: "They said hello.", Usage: usage(60, 6)}))
	task := builtin.NewTask(&fakeDelegator{result: builtin.TaskResult{Status: builtin.TaskCompleted, Result: "42",
		ModelName: "sub", Usage: usage(40, 10)}})
	s := openStore(t, t.TempDir())
	defer s.Close()
	a := newAgent(t, agent.Options{Model: lead, Tools: []*tool.Tool{task}, Store: s,
		Title: &agent.TitleOptions{Model: titler},
		// Three messages summarise the older ones once: the two first.
		Summarization: &agent.SummarizationOptions{Model: summarizer,
			Trigger: []config.ContextSize{{Type: config.ContextMessages, Value: 3}},
			Keep:    config.ContextSize{Type: config.ContextMessages, Value: 1}},
	})
	out, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", RunID: "r", Messages: []model.Message{
		model.UserText("hello"), {Role: model.RoleAssistant, Content: "hi"}, model.UserText("look it up"),
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.State.SummaryText == "" || out.State.Title != "Looking" {
		t.Fatalf("summary %q, title %q: the scenario did not summarise and title", out.State.SummaryText, out.State.Title)
	}
	if diff := cmp.Diff(model.Usage{InputTokens: 130, OutputTokens: 25, TotalTokens: 155}, out.Usage); diff != "" {
		t.Errorf("loop usage (-want +got):\n%s", diff)
	}
	run, err := s.GetRun(t.Context(), "r")
	if err != nil {
		t.Fatal(err)
	}
	want := &store.RunUsage{ModelName: "lead", InputTokens: 237, OutputTokens: 44, TotalTokens: 281,
		LeadAgentTokens: 155, SubagentTokens: 50, MiddlewareTokens: 76,
		ByModel: map[string]model.Usage{
			"lead":   *usage(130, 25),
			"sub":    *usage(40, 10),
			"titler": *usage(7, 3),
			"summ":   *usage(60, 6),
		}}
	if diff := cmp.Diff(want, run.Usage); diff != "" {
		t.Errorf("recorded usage (-want +got):\n%s", diff)
	}
}

// TestRunUsageRecordedOnFailure: a run whose model fails still records
// the calls it made, unnamed models under "unknown".
func TestRunUsageRecordedOnFailure(t *testing.T) {
	chat := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "echo", Arguments: json.RawMessage(`{}`)}}, Usage: usage(10, 2)},
		modeltest.Turn{Status: 500, Error: "boom"},
	)
	s := openStore(t, t.TempDir())
	defer s.Close()
	a := newAgent(t, agent.Options{Model: chat, Store: s, Tools: []*tool.Tool{textTool("echo", "ok")}})
	if _, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", RunID: "r",
		Messages: []model.Message{model.UserText("go")}}, nil); err == nil {
		t.Fatal("run succeeded, want the model's failure")
	}
	run, err := s.GetRun(t.Context(), "r")
	if err != nil {
		t.Fatal(err)
	}
	want := &store.RunUsage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12, LeadAgentTokens: 12,
		ByModel: map[string]model.Usage{store.UnknownModel: *usage(10, 2)}}
	if run.Status != store.RunError || !cmp.Equal(want, run.Usage) {
		t.Errorf("run %s with usage %+v, want error with %+v", run.Status, run.Usage, want)
	}
}

func TestNamedModel(t *testing.T) {
	m := modeltest.New()
	tests := []struct {
		name string
		m    model.ChatModel
		want string
	}{
		{"unnamed", m, ""},
		{"named", agent.NamedModel("a", m), "a"},
		{"renamed", agent.NamedModel("b", agent.NamedModel("a", m)), "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := agent.ModelName(tt.m); got != tt.want {
				t.Errorf("ModelName = %q, want %q", got, tt.want)
			}
		})
	}
	if agent.NamedModel("a", nil) != nil {
		t.Error("NamedModel of nil is not nil")
	}
}
