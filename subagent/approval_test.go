package subagent_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/subagent"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolpolicy"
)

// askLs is a hand-written Decider that asks before every ls call.
type askLs struct{}

func (askLs) Decide(call *tool.Call, _ json.RawMessage) toolpolicy.Decision {
	if call.Name == "ls" {
		return toolpolicy.Decision{Action: toolpolicy.ActionAsk, Rule: "tool_policy.rules[0]", Reason: "look first"}
	}
	return toolpolicy.Decision{}
}

func approvalHarness(t *testing.T, worker model.ChatModel) *harness {
	return newHarness(t, baseConfig, map[string]model.ChatModel{"worker": worker}, func(o *subagent.Options) {
		o.ToolMiddlewares = []tool.Middleware{agent.Approval(agent.ApprovalOptions{Decider: askLs{}})}
	})
}

const lookArgs = `{"description":"look","prompt":"look around","subagent_type":"general-purpose"}`

// A subagent whose parent relays pauses at its asked call: the task's
// result carries the pause (its call and saved state) and no terminal
// event; resumed with "approve", the subagent replays exactly that call
// once, from its saved state, and its answer is the task's result.
func TestApproval_subagentPausesAndResumesFromItsSavedState(t *testing.T) {
	worker := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "s1", Name: "ls", Arguments: json.RawMessage(`{}`)}}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			return modeltest.Turn{Text: "saw: " + modeltest.LastMessage(req).Content}
		}})
	h := approvalHarness(t, worker)
	var rec recorder
	res, err := h.callTask(builtin.WithApprovalRelay(t.Context()), &rec, nil, lookArgs)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := res.Artifact.(*thread.SubagentApproval)
	if !ok || p.Tool != "ls" || p.CallID != "s1" || p.Type != "general-purpose" || p.Rule != "tool_policy.rules[0]" || len(p.State) == 0 {
		t.Fatalf("paused result %+v (artifact %#v)", res, res.Artifact)
	}
	if names := rec.names(); slices.Contains(names, builtin.EventTaskFailed) || slices.Contains(names, builtin.EventTaskCompleted) {
		t.Errorf("a paused task emitted a terminal event: %v", names)
	}

	ctx := builtin.WithTaskResume(builtin.WithApprovalRelay(context.Background()), builtin.TaskResume{Pause: p, Answer: "approve"})
	res, err = h.callTask(ctx, &rec, nil, lookArgs)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.TextContent(); got != "Task Succeeded. Result: saw: uploads workspace outputs" {
		t.Errorf("resumed result %q", got)
	}
	reqs := worker.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the subagent's model ran %d times, want 2 (it never re-runs its earlier steps)", len(reqs))
	}
	var got []string
	for _, m := range reqs[1].Messages {
		if m.Role != model.RoleSystem {
			got = append(got, string(m.Role)+":"+m.ToolCallID)
		}
	}
	want := []string{"user:", "assistant:", "tool:s1", "user:", "assistant:", "tool:s1_answered"}
	if !slices.Equal(got, want) {
		t.Errorf("the resumed subagent's transcript %v, want %v", got, want)
	}
}

// Without a relaying parent the subagent's ask stays refused; a state
// over thread.MaxSubagentStateBytes cannot pause, and the task fails
// with a text saying why: the call never runs either way.
func TestApproval_subagentAskRefusedWithoutRelayOrOverTheStateCap(t *testing.T) {
	tests := []struct {
		name   string
		ctx    context.Context
		prompt string
		want   string
	}{
		{"no relay", context.Background(), "look around", "a subagent cannot ask for it"},
		{"state over the cap", builtin.WithApprovalRelay(context.Background()), strings.Repeat("x", thread.MaxSubagentStateBytes),
			"ls needs a human's approval, and the subagent's state ("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			worker := modeltest.New(
				modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "s1", Name: "ls", Arguments: json.RawMessage(`{}`)}}},
				modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
					return modeltest.Turn{Text: "saw: " + modeltest.LastMessage(req).Content}
				}})
			h := approvalHarness(t, worker)
			args, _ := json.Marshal(map[string]string{"description": "look", "prompt": tt.prompt, "subagent_type": "general-purpose"})
			res, err := h.callTask(tt.ctx, &recorder{}, nil, string(args))
			if err != nil {
				t.Fatal(err)
			}
			if res.Artifact != nil {
				t.Errorf("the task paused: %#v", res.Artifact)
			}
			if got := res.TextContent(); !strings.Contains(got, tt.want) {
				t.Errorf("result %q, want it to contain %q", clipText(got), tt.want)
			}
		})
	}
}

func clipText(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
