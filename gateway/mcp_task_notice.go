package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/mcptasks"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
)

var _ mcptasks.Notifier = (*Server)(nil)

// mcpTaskNoticeInstruction opens the hidden input of a notice run.
const mcpTaskNoticeInstruction = "A background task of this chat has an update the user should hear about. " +
	"Tell the user what happened, clearly and briefly. Never show or ask for a remote task id. " +
	"If the status is input_required, show the question and say that this integration cannot pass an answer back to the task yet. " +
	"If tracking_degraded is true, say that the task is still being checked, less often."

// NotifyMCPTask implements mcptasks.Notifier, DeerFlow's notification
// run: it starts a run on the task's thread, as the task's owner and
// non-interactive, whose input (hidden from the thread's view) is the
// instruction and the task's state, so that the agent tells the user. A
// thread with an active run is an error the runtime retries; a thread
// that is gone, or not the owner's, refuses the notice.
func (s *Server) NotifyMCPTask(ctx context.Context, t *store.MCPTask) error {
	th, err := s.store.GetThread(ctx, t.ThreadID)
	if errors.Is(err, store.ErrNotFound) || err == nil && th.UserID != t.UserID {
		return fmt.Errorf("thread %s of task %s: %w", t.ThreadID, t.ID, mcptasks.ErrNoticeRefused)
	}
	if err != nil {
		return err
	}
	u := s.principalFor(t.UserID)
	rc := map[string]any{"non_interactive": true}
	if th.AgentName != "" {
		rc["agent_name"] = th.AgentName
	}
	msg := model.Message{Role: model.RoleUser, Content: s.mcpTaskNoticeText(t),
		Meta: map[string]any{"hide_from_ui": true, "mcp_task_notification": map[string]any{"task_id": t.ID}}}
	_, status, err := s.startRun(ctx, u, th, rc, modeValues, []model.Message{msg})
	if err != nil && (status == http.StatusNotFound || status == http.StatusForbidden || status == http.StatusUnprocessableEntity) {
		return fmt.Errorf("%v: %w", err, mcptasks.ErrNoticeRefused)
	}
	return err
}

// mcpTaskNoticeText is the instruction and the task's state as JSON
// (DeerFlow's event: the result and the question cut to
// result_preview_max_chars), with the servers' text neutralised.
func (s *Server) mcpTaskNoticeText(t *store.MCPTask) string {
	preview := 2000
	degradedAfter := 3
	if s.opts.MCPTasks != nil {
		preview = s.opts.MCPTasks.Config().ResultPreviewMaxChars
		degradedAfter = s.opts.MCPTasks.Config().TrackingDegradedAfterErrors
	}
	cut := func(raw json.RawMessage) (any, bool) {
		if len(raw) == 0 {
			return nil, false
		}
		r := []rune(string(raw))
		if len(r) <= preview {
			return raw, false
		}
		return string(r[:preview]), true
	}
	result, truncated := cut(t.Result)
	if t.Result == nil && t.ResultTruncated {
		result, truncated = t.ResultPreview, true
	}
	question, _ := cut(t.InputRequired)
	event := map[string]any{"task_id": t.ID, "task_name": t.Toolset, "status": t.Status,
		"result": result, "result_truncated": truncated, "error": nilIfEmpty(t.Error), "input_required": question,
		"tracking_degraded": store.MCPTaskActive(t.Status) && t.PollErrors >= degradedAfter,
		"last_poll_error":   nilIfEmpty(t.LastPollError)}
	b, err := json.Marshal(event)
	if err != nil { // a cut result is a string: only invalid stored JSON fails
		b, _ = json.Marshal(map[string]any{"task_id": t.ID, "task_name": t.Toolset, "status": t.Status})
	}
	return mcpTaskNoticeInstruction + "\n\n" + agent.NeutralizeUntrustedTags(string(b))
}
