package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/store"
)

// Limits of the MCP task routes (DeerFlow's routers/mcp_tasks.py).
const (
	mcpTasksDefaultLimit = 50
	mcpTasksMaxLimit     = 100
	// mcpTaskErrorChars bounds each error text of an answer.
	mcpTaskErrorChars = 500
)

// mcpTaskRoutes registers DeerFlow's thread-scoped MCP task routes, the
// frontend's background-task panel (GET /api/features says whether to
// call them): reading needs threads:read, cancelling threads:write.
func (s *Server) mcpTaskRoutes(h func(pattern string, f handlerFunc)) {
	h("GET /api/threads/{tid}/mcp-tasks", s.perm(authz.ThreadsRead, s.listMCPTasks))
	h("GET /api/threads/{tid}/mcp-tasks/{task}", s.perm(authz.ThreadsRead, s.getMCPTask))
	h("POST /api/threads/{tid}/mcp-tasks/{task}/cancel", s.perm(authz.ThreadsWrite, s.cancelMCPTask))
}

// mcpTasksReady answers 503 when the task runtime is off, and checks
// that the thread is the caller's.
func (s *Server) mcpTasksReady(w http.ResponseWriter, r *http.Request, u *principal) bool {
	if s.opts.MCPTasks == nil {
		writeError(w, http.StatusServiceUnavailable, "MCP background tasks are not enabled (mcp_tasks.enabled)")
		return false
	}
	_, ok := s.ownThread(w, r, u)
	return ok
}

// listMCPTasks is GET /api/threads/{tid}/mcp-tasks?limit=N (1 to 100,
// default 50): the thread's tasks of the caller, newest first.
func (s *Server) listMCPTasks(w http.ResponseWriter, r *http.Request, u *principal) {
	limit := mcpTasksDefaultLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > mcpTasksMaxLimit {
			writeError(w, http.StatusUnprocessableEntity, "limit must be an integer from 1 to %d", mcpTasksMaxLimit)
			return
		}
		limit = n
	}
	if !s.mcpTasksReady(w, r, u) {
		return
	}
	tasks, err := s.opts.MCPTasks.List(r.Context(), u.ID, r.PathValue("tid"), false, limit)
	if err != nil {
		s.internal(w, "cannot list the background tasks", err)
		return
	}
	threshold := s.opts.MCPTasks.Config().TrackingDegradedAfterErrors
	out := make([]map[string]any, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, mcpTaskItem(t, threshold))
	}
	writeJSON(w, http.StatusOK, out)
}

// getMCPTask is GET /api/threads/{tid}/mcp-tasks/{task}.
func (s *Server) getMCPTask(w http.ResponseWriter, r *http.Request, u *principal) {
	if !s.mcpTasksReady(w, r, u) {
		return
	}
	t, err := s.opts.MCPTasks.Get(r.Context(), u.ID, r.PathValue("tid"), r.PathValue("task"))
	s.answerMCPTask(w, t, err)
}

// cancelMCPTask is POST /api/threads/{tid}/mcp-tasks/{task}/cancel: the
// cancellation is recorded and carried out by the poller.
func (s *Server) cancelMCPTask(w http.ResponseWriter, r *http.Request, u *principal) {
	if !s.mcpTasksReady(w, r, u) {
		return
	}
	t, err := s.opts.MCPTasks.CancelID(r.Context(), u.ID, r.PathValue("tid"), r.PathValue("task"))
	s.answerMCPTask(w, t, err)
}

func (s *Server) answerMCPTask(w http.ResponseWriter, t *store.MCPTask, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "MCP task not found")
	case err != nil:
		s.internal(w, "cannot read the background task", err)
	default:
		writeJSON(w, http.StatusOK, mcpTaskDetail(t, s.opts.MCPTasks.Config().TrackingDegradedAfterErrors))
	}
}

// mcpTaskItem is a task of the list, in DeerFlow's shape; the server's
// own task id is never shown.
func mcpTaskItem(t *store.MCPTask, threshold int) map[string]any {
	return map[string]any{
		"task_id":           t.ID,
		"task_name":         t.Toolset,
		"status":            t.Status,
		"created_at":        isoTime(t.CreatedAt),
		"updated_at":        isoTime(t.UpdatedAt),
		"error":             shortError(t.Error),
		"tracking_degraded": t.PollErrors >= threshold,
		"cancel_requested":  !t.CancelRequestedAt.IsZero(),
	}
}

// mcpTaskDetail is one task in DeerFlow's detail shape. Antler keeps no
// result_artifact; a failed cancellation's error is the task's error.
func mcpTaskDetail(t *store.MCPTask, threshold int) map[string]any {
	d := mcpTaskItem(t, threshold)
	var cancelErr any
	if !t.CancelRequestedAt.IsZero() && store.MCPTaskActive(t.Status) {
		cancelErr = shortError(t.Error)
	}
	d["last_polled_at"] = mcpTaskTime(t.LastPolledAt)
	d["last_poll_error"] = shortError(t.LastPollError)
	d["last_cancel_error"] = cancelErr
	d["cancel_attempt_count"] = t.CancelAttempts
	d["notification_status"] = noticeStatus(t)
	d["notification_error"] = shortError(t.NotifyError)
	d["notification_attempt_count"] = t.NotifyAttempts
	d["result"] = rawOrNil(t.Result)
	d["result_preview"] = nilIfEmpty(t.ResultPreview)
	d["result_truncated"] = t.ResultTruncated
	d["result_artifact"] = nil
	d["input_required"] = rawOrNil(t.InputRequired)
	return d
}

// noticeStatus is DeerFlow's notification_status of t: "pending" while
// a notice is due, "dead_letter" once one was given up, "delivered" after
// one was, else "none".
func noticeStatus(t *store.MCPTask) string {
	switch {
	case !t.NotifyDueAt.IsZero():
		return "pending"
	case t.NotifyError != "":
		return "dead_letter"
	case !t.NotifiedAt.IsZero():
		return "delivered"
	}
	return "none"
}

func shortError(s string) any {
	if s == "" {
		return nil
	}
	r := []rune(s)
	if len(r) > mcpTaskErrorChars {
		r = r[:mcpTaskErrorChars]
	}
	return string(r)
}

// mcpTaskTime is isoTime, or null for the zero time.
func mcpTaskTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return isoTime(t)
}

func rawOrNil(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return b
}
