package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/tool"
)

// ListBackgroundTasksName is the name of the list_background_tasks tool.
const ListBackgroundTasksName = "list_background_tasks"

//go:embed list_background_tasks.md
var listBackgroundTasksDescription string

// listBackgroundTasksLimit is how many tasks one answer lists, newest
// first (DeerFlow's).
const listBackgroundTasksLimit = 20

// BackgroundTasks is the MCP task runtime (*mcptasks.Runtime) as the
// background-task tools use it.
type BackgroundTasks interface {
	// List returns a thread's tasks of a user, newest first.
	List(ctx context.Context, userID, threadID string, activeOnly bool, limit int) ([]*store.MCPTask, error)
	// Cancel asks to cancel the one active task named by task (an id or
	// a toolset name; "" when only one is active); a *mcptasks.MatchError
	// says why none was picked.
	Cancel(ctx context.Context, userID, threadID, task string) (*store.MCPTask, error)
	// Config is the mcp_tasks section in force.
	Config() config.MCPTasks
}

const listBackgroundTasksSchema = `{
  "type": "object",
  "properties": {
    "active_only": {"type": "boolean", "description": "Return only tasks that are still active."}
  }
}`

type listBackgroundTasksArgs struct {
	ActiveOnly bool `json:"active_only,omitempty"`
}

// backgroundTask is one task as the model sees it (DeerFlow's
// _public_task, plus what Antler delivers: the result, the server's
// question, and whether tracking is degraded). The server's own task id
// is never shown.
type backgroundTask struct {
	TaskID           string  `json:"task_id"`
	TaskName         string  `json:"task_name"`
	Status           string  `json:"status"`
	CreatedAt        string  `json:"created_at"`
	UpdatedAt        string  `json:"updated_at"`
	Error            *string `json:"error"`
	CancelRequested  bool    `json:"cancel_requested"`
	TrackingDegraded bool    `json:"tracking_degraded,omitempty"`
	Result           string  `json:"result,omitempty"`
	ResultTruncated  bool    `json:"result_truncated,omitempty"`
	InputRequired    string  `json:"input_required,omitempty"`
}

// NewListBackgroundTasks returns the list_background_tasks tool
// (DeerFlow's background_tasks_tool.py): the current and recent MCP
// background tasks of the call's thread and user, at most 20, newest
// first. neutralize makes the servers' text safe for the model's context
// (Antler passes agent.NeutralizeUntrustedTags). It panics if tasks or
// neutralize is nil (a wiring mistake).
func NewListBackgroundTasks(tasks BackgroundTasks, neutralize func(string) string) *tool.Tool {
	if tasks == nil || neutralize == nil {
		panic("builtin.NewListBackgroundTasks: tasks or neutralize is nil")
	}
	t, err := tool.NewWithSchema(ListBackgroundTasksName, strings.TrimSpace(listBackgroundTasksDescription),
		json.RawMessage(listBackgroundTasksSchema),
		func(ctx context.Context, call *tool.Call, in listBackgroundTasksArgs) (*tool.Result, error) {
			threadID := callThreadID(call)
			if threadID == "" {
				return tool.JSON(map[string]any{"tasks": []backgroundTask{}, "message": "The current thread could not be resolved."})
			}
			list, err := tasks.List(ctx, callUserID(call), threadID, in.ActiveOnly, listBackgroundTasksLimit)
			if err != nil {
				return nil, err
			}
			cfg := tasks.Config()
			out := make([]backgroundTask, 0, len(list))
			for _, t := range list {
				out = append(out, publicTask(t, cfg, neutralize))
			}
			return tool.JSON(map[string]any{"tasks": out, "count": len(out)})
		})
	if err != nil {
		panic("builtin.NewListBackgroundTasks: " + err.Error()) // constant schema: a programming error
	}
	return t
}

// publicTask is t as the model sees it; the result and question are cut
// to result_preview_max_chars characters.
func publicTask(t *store.MCPTask, cfg config.MCPTasks, neutralize func(string) string) backgroundTask {
	name := t.Toolset
	if name == "" {
		name = "Background task"
	}
	p := backgroundTask{TaskID: t.ID, TaskName: neutralize(name), Status: t.Status,
		CreatedAt: t.CreatedAt.Format(time.RFC3339), UpdatedAt: t.UpdatedAt.Format(time.RFC3339),
		CancelRequested:  !t.CancelRequestedAt.IsZero(),
		TrackingDegraded: store.MCPTaskActive(t.Status) && t.PollErrors >= cfg.TrackingDegradedAfterErrors}
	if t.Error != "" {
		e := neutralize(t.Error)
		p.Error = &e
	}
	switch {
	case len(t.Result) > 0:
		p.Result, p.ResultTruncated = previewJSON(t.Result, cfg.ResultPreviewMaxChars)
	case t.ResultTruncated:
		p.Result, p.ResultTruncated = t.ResultPreview, true
	}
	p.Result = neutralize(p.Result)
	if t.Status == store.MCPTaskInputRequired && len(t.InputRequired) > 0 {
		p.InputRequired, _ = previewJSON(t.InputRequired, cfg.ResultPreviewMaxChars)
		p.InputRequired = neutralize(p.InputRequired)
	}
	return p
}

// previewJSON is raw as text (a JSON string's value, else the JSON
// itself), cut to n characters.
func previewJSON(raw json.RawMessage, n int) (string, bool) {
	text := string(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = s
	}
	r := []rune(text)
	if len(r) <= n {
		return text, false
	}
	return string(r[:n]), true
}
