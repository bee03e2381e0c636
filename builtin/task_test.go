package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// fakeDelegator plays a fixed sequence of progress messages, then a
// result or an error.
type fakeDelegator struct {
	messages []string
	result   builtin.TaskResult
	err      error
	got      builtin.TaskRequest
}

func (f *fakeDelegator) ResolveTask(typ, parent string) (builtin.TaskType, error) {
	if typ != "general-purpose" {
		return builtin.TaskType{}, errors.New("Unknown subagent type '" + typ + "'. Available: general-purpose")
	}
	return builtin.TaskType{Name: typ, ModelName: parent, Skills: []string{"x", "y"}}, nil
}

func (f *fakeDelegator) Delegate(ctx context.Context, req builtin.TaskRequest, progress func(builtin.TaskProgress)) (builtin.TaskResult, error) {
	f.got = req
	u := model.Usage{}
	for i, m := range f.messages {
		u = u.Add(model.Usage{InputTokens: 1, OutputTokens: 1, TotalTokens: 2})
		uu := u
		progress(builtin.TaskProgress{Message: model.Message{Role: model.RoleAssistant, Content: m}, Index: i + 1, Usage: &uu})
	}
	r := f.result
	r.Usage = &u
	return r, f.err
}

type emitted struct {
	name string
	data map[string]any
}

func callTask(t *testing.T, d builtin.Delegator, args string) (*tool.Result, []emitted, error) {
	t.Helper()
	return callTaskCtx(t.Context(), d, args)
}

func callTaskCtx(ctx context.Context, d builtin.Delegator, args string) (*tool.Result, []emitted, error) {
	var events []emitted
	call := &tool.Call{ID: "c1", Name: "task", ThreadID: "t", UserID: "u", RunID: "r",
		State:   &thread.State{Sandbox: &thread.Sandbox{SandboxID: "sb"}, ThreadData: &thread.ThreadData{OutputsPath: "/o"}},
		Context: map[string]any{"model_name": "m", "tool_groups": []string{"web"}, "available_skills": []string{"y", "z"}},
		Emit: func(name string, data any) {
			events = append(events, emitted{name, data.(map[string]any)})
		}}
	res, err := builtin.NewTask(d).Handler(ctx, call, json.RawMessage(args))
	return res, events, err
}

func TestTaskTool(t *testing.T) {
	tests := []struct {
		name       string
		result     builtin.TaskResult
		wantEvent  string
		wantText   string
		wantStatus string
	}{
		{"completed", builtin.TaskResult{Status: builtin.TaskCompleted, Result: "42"}, "task_completed", "Task Succeeded. Result: 42", "completed"},
		{"failed", builtin.TaskResult{Status: builtin.TaskFailed, Error: "bad"}, "task_failed", "Task failed. Error: bad", "failed"},
		{"cancelled", builtin.TaskResult{Status: builtin.TaskCancelled}, "task_cancelled", "Task cancelled by user.", "cancelled"},
		{"timed out", builtin.TaskResult{Status: builtin.TaskTimedOut, Error: "Execution timed out after 5 seconds"}, "task_timed_out", "Task timed out. Error: Execution timed out after 5 seconds", "timed_out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &fakeDelegator{messages: []string{"one", "two"}, result: tc.result}
			res, events, err := callTask(t, d, `{"description":"count","prompt":"count it","subagent_type":"general-purpose"}`)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range events {
				names = append(names, e.name)
			}
			if want := []string{"task_started", "task_running", "task_running", tc.wantEvent}; !cmp.Equal(names, want) {
				t.Errorf("events = %v, want %v", names, want)
			}
			if got := events[2].data["message_index"]; got != 2 {
				t.Errorf("second message_index = %v", got)
			}
			if got, want := events[3].data["usage"], map[string]int64{"input_tokens": 2, "output_tokens": 2, "total_tokens": 4}; !cmp.Equal(got, want) {
				t.Errorf("terminal usage = %v, want %v", got, want)
			}
			if res.TextContent() != tc.wantText || res.Meta[builtin.MetaSubagentStatus] != tc.wantStatus {
				t.Errorf("result = %q %v", res.TextContent(), res.Meta)
			}
			want := builtin.TaskRequest{TaskID: "c1", Description: "count", Prompt: "count it", SubagentType: "general-purpose",
				ThreadID: "t", UserID: "u", RunID: "r", ParentModel: "m", ToolGroups: []string{"web"}, Skills: []string{"y"},
				Sandbox: &thread.Sandbox{SandboxID: "sb"}, ThreadData: &thread.ThreadData{OutputsPath: "/o"}}
			d.got.Context = nil
			if diff := cmp.Diff(want, d.got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			led := res.Update.Delegations
			if len(led) != 1 || led[0].ID != "c1" || led[0].RunID != "r" || led[0].Status != tc.wantStatus || led[0].Type != "general-purpose" {
				t.Errorf("ledger = %+v", led)
			}
		})
	}
}

func TestTaskToolParentCancelled(t *testing.T) {
	d := &fakeDelegator{result: builtin.TaskResult{Status: builtin.TaskCancelled}, err: context.Canceled}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, events, err := callTaskCtx(ctx, d, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`)
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("got %v, %v", res, err)
	}
	if last := events[len(events)-1]; last.name != "task_cancelled" {
		t.Errorf("last event = %s", last.name)
	}
}

func TestTaskToolSchema(t *testing.T) {
	var s struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal(builtin.NewTask(&fakeDelegator{}).InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(len(s.Properties), s.Required) != "3 [description prompt subagent_type]" {
		t.Errorf("schema = %+v", s)
	}
	res, _, err := callTask(t, &fakeDelegator{}, `{"description":"d"}`)
	if err != nil || !res.IsError {
		t.Errorf("missing arguments: %v %v", res.TextContent(), err)
	}
}
