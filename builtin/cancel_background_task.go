package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"strings"

	"github.com/antlerhq/antler/mcptasks"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/tool"
)

// CancelBackgroundTaskName is the name of the cancel_background_task tool.
const CancelBackgroundTaskName = "cancel_background_task"

//go:embed cancel_background_task.md
var cancelBackgroundTaskDescription string

// maxCancelTaskArg bounds the task argument (a toolset name is at most
// 255 characters, an id much less).
const maxCancelTaskArg = 1024

const cancelBackgroundTaskSchema = `{
  "type": "object",
  "properties": {
    "task": {"type": "string", "description": "Optional exact task name or task ID. Omit it only when one active task exists."}
  }
}`

type cancelBackgroundTaskArgs struct {
	Task string `json:"task,omitempty"`
}

type cancelBackgroundTaskResult struct {
	Cancelled bool            `json:"cancelled"`
	Task      *backgroundTask `json:"task,omitempty"`
	Message   string          `json:"message"`
}

// NewCancelBackgroundTask returns the cancel_background_task tool
// (DeerFlow's): it asks to cancel one active task of the call's thread
// and user, named by its task name or id (or the only active one). The
// runtime's poller cancels it at the server. It panics if tasks or
// neutralize is nil (a wiring mistake).
func NewCancelBackgroundTask(tasks BackgroundTasks, neutralize func(string) string) *tool.Tool {
	if tasks == nil || neutralize == nil {
		panic("builtin.NewCancelBackgroundTask: tasks or neutralize is nil")
	}
	t, err := tool.NewWithSchema(CancelBackgroundTaskName, strings.TrimSpace(cancelBackgroundTaskDescription),
		json.RawMessage(cancelBackgroundTaskSchema),
		func(ctx context.Context, call *tool.Call, in cancelBackgroundTaskArgs) (*tool.Result, error) {
			threadID := callThreadID(call)
			if threadID == "" {
				return tool.JSON(cancelBackgroundTaskResult{Message: "The current thread could not be resolved."})
			}
			if len(in.Task) > maxCancelTaskArg {
				return tool.Errorf("task must be a task name or task_id of at most %d characters", maxCancelTaskArg), nil
			}
			t, err := tasks.Cancel(ctx, callUserID(call), threadID, in.Task)
			var me *mcptasks.MatchError
			if errors.As(err, &me) {
				return tool.JSON(cancelBackgroundTaskResult{Message: neutralize(me.Msg)})
			}
			if err != nil {
				return nil, err
			}
			p := publicTask(t, tasks.Config(), neutralize)
			msg := "Cancellation requested. It is retried safely if the server is temporarily unavailable."
			if store.MCPTaskTerminal(t.Status) {
				msg = "The task had already ended (" + t.Status + ")."
			}
			return tool.JSON(cancelBackgroundTaskResult{Cancelled: t.Status == store.MCPTaskCancelled, Task: &p, Message: msg})
		})
	if err != nil {
		panic("builtin.NewCancelBackgroundTask: " + err.Error()) // constant schema: a programming error
	}
	return t
}
