package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// TaskName is the name of the subagent delegation tool.
const TaskName = "task"

// Runtime context keys the task tool reads from tool.Call.Context. The
// lead-agent factory stamps them (DeerFlow's run metadata).
const (
	// ContextModelName is the parent's model, inherited by subagents
	// whose model is "inherit".
	ContextModelName = "model_name"
	// ContextToolGroups is the parent's tool-group filter ([]string; nil
	// or absent: all groups).
	ContextToolGroups = "tool_groups"
	// ContextAvailableSkills is the parent's skill allowlist ([]string;
	// nil or absent: every enabled skill).
	ContextAvailableSkills = "available_skills"
	// ContextMaxTotalSubagents is a run's per-run task limit (int; absent:
	// subagents.max_total_per_run), read by the subagent limit.
	ContextMaxTotalSubagents = "max_total_subagents"
)

// The task event names, sent through tool.Call.Emit.
const (
	EventTaskStarted   = "task_started"
	EventTaskRunning   = "task_running"
	EventTaskCompleted = "task_completed"
	EventTaskFailed    = "task_failed"
	EventTaskCancelled = "task_cancelled"
	EventTaskTimedOut  = "task_timed_out"
)

//go:embed task.md
var taskDescription string

// TaskType is a resolved subagent type.
type TaskType struct {
	// Name is the type's name (general-purpose, bash, or a custom type).
	Name string
	// ModelName is the model the subagent runs with: its own model, else
	// the parent's, else the first configured one.
	ModelName string
	// Skills is the type's own skill allowlist (nil: all enabled).
	Skills []string
}

// TaskRequest is one delegation, with what the subagent inherits from the
// parent run.
type TaskRequest struct {
	// TaskID is the model's tool-call id: a correlation id for events, not
	// the execution's identity.
	TaskID       string
	Description  string
	Prompt       string
	SubagentType string
	// ThreadID, UserID, AgentName and RunID are the parent's: the
	// subagent works in the same thread's sandbox for the same user.
	ThreadID  string
	UserID    string
	AgentName string
	RunID     string
	// ParentModel is the parent run's model ("" if unknown).
	ParentModel string
	// ToolGroups is the parent's config-tool group filter (nil: all).
	ToolGroups []string
	// Skills is the effective skill allowlist: the parent's intersected
	// with the type's (nil: all enabled).
	Skills []string
	// Sandbox and ThreadData are copied from the parent's state.
	Sandbox    *thread.Sandbox
	ThreadData *thread.ThreadData
	// Context is a copy of the parent's runtime context.
	Context map[string]any
	// ApprovalRelay says that the parent relays the subagent's approvals
	// to its human: a call the policy asks about pauses the task (the
	// result's Pause) instead of being refused.
	ApprovalRelay bool
	// ApprovalGrants are the parent thread's "approve for this thread"
	// grants, which hold for the subagent's calls too.
	ApprovalGrants []thread.ApprovalGrant
	// Resume, when set, resumes a paused subagent from its saved state
	// with the human's answer instead of starting it on Prompt.
	Resume *TaskResume
}

// TaskProgress reports one new assistant message of a running task.
type TaskProgress struct {
	Message model.Message
	// Index counts the task's assistant messages from 1.
	Index int
	// Usage is the task's cumulative token usage so far (nil: unknown).
	Usage *model.Usage
}

// TaskResult is the terminal outcome of a task.
type TaskResult struct {
	// ExecutionID is the executor's own id of the run.
	ExecutionID string
	Status      TaskStatus
	// StopReason is set when a guardrail cap ended the task.
	StopReason TaskStopReason
	// Result is the subagent's final answer (completed tasks).
	Result string
	// Error describes a failure, timeout or cancellation.
	Error     string
	ModelName string
	// Usage is the cumulative token usage (nil: unknown).
	Usage *model.Usage
	// Pause is set (with Status failed and Error TaskPausedError) when the
	// subagent stopped for a human's approval of one of its calls; the
	// parent's approval middleware turns it into the parent's card.
	Pause *thread.SubagentApproval
}

// Delegator runs subagent tasks for the task tool. subagent.Executor
// implements it; the interface lives here so that builtin never imports
// the executor (docs/architecture.md: layer 3 never imports layer 4).
type Delegator interface {
	// ResolveTask resolves a subagent type for a parent running
	// parentModel. An error is shown to the model as the task's failure
	// ("Unknown subagent type 'x'. Available: a, b").
	ResolveTask(subagentType, parentModel string) (TaskType, error)
	// Delegate runs one task and blocks until it reaches a terminal
	// status, calling progress (from one goroutine, in order, never after
	// Delegate returned) for each new assistant message. The error is
	// non-nil only when ctx ended (the task is then cancelled
	// cooperatively and the result reports status cancelled with the
	// usage so far) or the delegator is closed.
	Delegate(ctx context.Context, req TaskRequest, progress func(TaskProgress)) (TaskResult, error)
}

type taskArgs struct {
	Description  string `json:"description" jsonschema:"A short (3-5 word) description of the task for logging and display. Always provide this parameter first."`
	Prompt       string `json:"prompt" jsonschema:"The task for the subagent. Be specific and clear about what needs to be done and what to return. Always provide this parameter second."`
	SubagentType string `json:"subagent_type" jsonschema:"The type of subagent to use. Always provide this parameter third."`
}

// NewTask returns the task tool (DeerFlow's task_tool.py): it resolves the
// subagent type, emits task_started, runs the task through d while
// forwarding each new subagent message as task_running, then emits the
// terminal event (task_completed, task_failed, task_cancelled or
// task_timed_out) and returns the status contract's text with the
// structured result in the message metadata and a delegation ledger
// entry in the state update.
//
// The subagent inherits the parent's thread, user, run, sandbox and
// thread data, its tool groups (Context "tool_groups"), and a skill
// allowlist intersected with the parent's (Context "available_skills").
//
// NewTask panics if d is nil (a wiring mistake).
func NewTask(d Delegator) *tool.Tool {
	if d == nil {
		panic("builtin.NewTask: nil Delegator")
	}
	return tool.New(TaskName, strings.TrimSpace(taskDescription),
		func(ctx context.Context, call *tool.Call, in taskArgs) (*tool.Result, error) {
			return runTask(ctx, d, call, in)
		})
}

func runTask(ctx context.Context, d Delegator, call *tool.Call, in taskArgs) (*tool.Result, error) {
	start := time.Now().UTC()
	parentModel := call.ContextString(ContextModelName)
	tt, err := d.ResolveTask(in.SubagentType, parentModel)
	if err != nil {
		return taskResult(call, in, start, TaskResult{Status: TaskFailed, Error: err.Error()})
	}
	req := TaskRequest{
		TaskID: call.ID, Description: in.Description, Prompt: in.Prompt, SubagentType: tt.Name,
		ThreadID: callThreadID(call), UserID: callUserID(call), AgentName: call.AgentName, RunID: call.RunID,
		ParentModel: parentModel,
		ToolGroups:  contextStrings(call, ContextToolGroups),
		Skills:      MergeSkillAllowlists(contextStrings(call, ContextAvailableSkills), tt.Skills),
		Context:     maps.Clone(call.Context),
	}
	req.ApprovalRelay, req.Resume = approvalRelay(ctx), taskResume(ctx)
	if req.RunID == "" {
		req.RunID = call.ContextString("run_id")
	}
	if s := call.State; s != nil {
		if s.Sandbox != nil {
			sb := *s.Sandbox
			req.Sandbox = &sb
		}
		if s.ThreadData != nil {
			td := *s.ThreadData
			req.ThreadData = &td
		}
		req.ApprovalGrants = slices.Clone(s.ApprovalGrants)
	}
	call.EmitEvent(EventTaskStarted, map[string]any{
		"type": EventTaskStarted, "task_id": call.ID, "description": in.Description, "model_name": tt.ModelName,
	})
	res, err := d.Delegate(ctx, req, func(p TaskProgress) {
		msg := p.Message
		call.EmitEvent(EventTaskRunning, map[string]any{
			"type": EventTaskRunning, "task_id": call.ID, "message": &msg, "message_index": p.Index,
			"total_messages": p.Index, "usage": usageMap(p.Usage), "model_name": tt.ModelName,
		})
	})
	if res.ModelName == "" {
		res.ModelName = tt.ModelName
	}
	if err != nil {
		// The parent is going away: report the usage once, then stop.
		if res.Status == "" {
			res.Status = TaskCancelled
		}
		emitTerminal(call, res)
		return nil, err
	}
	if res.Pause != nil && req.ApprovalRelay {
		// Not terminal: the task waits for the human's answer.
		return pausedTaskResult(res)
	}
	emitTerminal(call, res)
	return taskResult(call, in, start, res)
}

// pausedTaskResult is the result of a task paused for an approval: the
// failure text a model would read, with the pause in the artifact for
// the parent's approval middleware, which turns it into a card.
func pausedTaskResult(r TaskResult) (*tool.Result, error) {
	res := tool.Errorf("Error: %s", TaskPausedError(r.Pause))
	res.Artifact = r.Pause
	return res, nil
}

// emitTerminal sends the event of a terminal status.
func emitTerminal(call *tool.Call, r TaskResult) {
	data := map[string]any{"task_id": call.ID, "usage": usageMap(r.Usage), "model_name": r.ModelName}
	var event string
	switch r.Status {
	case TaskCompleted:
		event = EventTaskCompleted
		data["result"] = r.Result
		if r.StopReason != "" {
			data["stop_reason"] = string(r.StopReason)
		}
	case TaskFailed:
		event = EventTaskFailed
		data["error"] = r.Error
		if r.StopReason != "" {
			data["stop_reason"] = string(r.StopReason)
		}
	case TaskCancelled:
		event = EventTaskCancelled
		data["error"] = r.Error
	default: // timed_out, polling_timed_out
		event = EventTaskTimedOut
		data["error"] = r.Error
		data["status"] = string(r.Status)
	}
	data["type"] = event
	call.EmitEvent(event, data)
}

// taskResult builds the tool result of a terminal task: the contract's
// text, its metadata, and the delegation ledger entry.
func taskResult(call *tool.Call, in taskArgs, start time.Time, r TaskResult) (*tool.Result, error) {
	meta, err := TaskResultMeta(r)
	if err != nil {
		return nil, err
	}
	text, detail := TaskResultText(r)
	res := tool.Text(text)
	res.Meta = meta
	ledger := detail
	if r.Status == TaskCompleted {
		ledger = r.Result
	}
	runID := call.RunID
	if runID == "" {
		runID = call.ContextString("run_id")
	}
	res.Update = &thread.Update{Delegations: []thread.Delegation{{
		ID: call.ID, RunID: runID, Description: in.Description, Type: in.SubagentType, Status: string(r.Status),
		Result: taskBrief(ledger, taskBriefMaxChars), CreatedAt: start, UpdatedAt: time.Now().UTC(),
	}}}
	return res, nil
}

// contextStrings reads a string list from the runtime context: nil when
// absent or null, so that "no filter" and "empty filter" stay apart.
func contextStrings(call *tool.Call, key string) []string {
	if call == nil {
		return nil
	}
	switch v := call.Context[key].(type) {
	case []string:
		return append([]string{}, v...)
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}
