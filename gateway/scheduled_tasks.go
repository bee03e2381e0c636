package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/scheduler"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/vpath"
)

// Limits of the scheduled-task routes.
const (
	// maxTaskTitle is DeerFlow's title column (255).
	maxTaskTitle = 255
	// maxTaskPrompt bounds a task's prompt, in bytes.
	maxTaskPrompt = 64 << 10
	// maxTasksPerUser bounds the tasks one user may keep.
	maxTasksPerUser = 100
	// maxTaskRunsPage is the largest limit of GET .../runs (DeerFlow's).
	maxTaskRunsPage = 200
)

// scheduledTaskRoutes registers DeerFlow's scheduled-task routes
// (routers/scheduled_tasks.py); reading needs threads:read, changing
// threads:write, as there.
func (s *Server) scheduledTaskRoutes(h func(pattern string, f handlerFunc)) {
	h("GET /api/scheduled-tasks", s.perm(authz.ThreadsRead, s.listScheduledTasks))
	h("POST /api/scheduled-tasks", s.perm(authz.ThreadsWrite, s.createScheduledTask))
	h("GET /api/scheduled-tasks/{id}", s.perm(authz.ThreadsRead, s.onOwnTask(s.getScheduledTask)))
	h("PATCH /api/scheduled-tasks/{id}", s.perm(authz.ThreadsWrite, s.onOwnTask(s.updateScheduledTask)))
	h("DELETE /api/scheduled-tasks/{id}", s.perm(authz.ThreadsWrite, s.onOwnTask(s.deleteScheduledTask)))
	h("POST /api/scheduled-tasks/{id}/pause", s.perm(authz.ThreadsWrite, s.onOwnTask(s.pauseScheduledTask)))
	h("POST /api/scheduled-tasks/{id}/resume", s.perm(authz.ThreadsWrite, s.onOwnTask(s.resumeScheduledTask)))
	h("POST /api/scheduled-tasks/{id}/trigger", s.perm(authz.ThreadsWrite, s.onOwnTask(s.triggerScheduledTask)))
	h("GET /api/scheduled-tasks/{id}/runs", s.perm(authz.ThreadsRead, s.listScheduledTaskRuns))
	h("GET /api/threads/{tid}/scheduled-tasks", s.perm(authz.ThreadsRead, s.listThreadScheduledTasks))
}

// optTime is a nullable timestamp.
func optTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return isoTime(t)
}

// optString is a nullable string.
func optString(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// taskJSON is DeerFlow's task object (every column of the row).
func taskJSON(t *store.ScheduledTask) map[string]any {
	spec := t.ScheduleSpec
	if spec == nil {
		spec = map[string]any{}
	}
	return map[string]any{"id": t.ID, "user_id": t.UserID, "thread_id": optString(t.ThreadID), "context_mode": t.ContextMode,
		"assistant_id": optString(t.AssistantID), "title": t.Title, "prompt": t.Prompt, "schedule_type": t.ScheduleType,
		"schedule_spec": spec, "timezone": t.Timezone, "status": t.Status, "overlap_policy": t.OverlapPolicy,
		"next_run_at": optTime(t.NextRunAt), "last_run_at": optTime(t.LastRunAt), "last_run_id": optString(t.LastRunID),
		"last_thread_id": optString(t.LastThreadID), "last_error": optString(t.LastError), "lease_owner": optString(t.LeaseOwner),
		"lease_expires_at": optTime(t.LeaseExpiresAt), "run_count": t.RunCount,
		"created_at": isoTime(t.CreatedAt), "updated_at": isoTime(t.UpdatedAt)}
}

// taskRunJSON is DeerFlow's task run object.
func taskRunJSON(r *store.ScheduledTaskRun) map[string]any {
	return map[string]any{"id": r.ID, "task_id": r.TaskID, "thread_id": r.ThreadID, "run_id": optString(r.RunID),
		"scheduled_for": isoTime(r.ScheduledFor), "trigger": r.Trigger, "status": r.Status, "error": optString(r.Error),
		"started_at": optTime(r.StartedAt), "finished_at": optTime(r.FinishedAt), "created_at": isoTime(r.CreatedAt)}
}

func tasksJSON(ts []*store.ScheduledTask) []any {
	out := make([]any, 0, len(ts))
	for _, t := range ts {
		out = append(out, taskJSON(t))
	}
	return out
}

// sched returns the attached scheduled tasks, or answers 503.
func (s *Server) sched(w http.ResponseWriter) *scheduledTasks {
	st := s.scheduled.Load()
	if st == nil {
		writeError(w, http.StatusServiceUnavailable, "Scheduled task repo not available")
	}
	return st
}

// ownTask returns the caller's task {id}, or answers 404 (another user's
// task is not found either).
func (s *Server) ownTask(w http.ResponseWriter, r *http.Request, u *principal, st *scheduledTasks) (*store.ScheduledTask, bool) {
	t, err := st.tasks.GetScheduledTask(r.Context(), r.PathValue("id"))
	if err == nil && t.UserID == u.ID {
		return t, true
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.internal(w, "cannot read the scheduled task", err)
		return nil, false
	}
	writeError(w, http.StatusNotFound, "Scheduled task not found")
	return nil, false
}

// taskHandler handles a route on the caller's own task {id}.
type taskHandler func(w http.ResponseWriter, r *http.Request, u *principal, st *scheduledTasks, t *store.ScheduledTask)

// onOwnTask answers 503 without the scheduler and 404 for a task that
// is not the caller's, and hands the rest to f.
func (s *Server) onOwnTask(f taskHandler) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, u *principal) {
		st := s.sched(w)
		if st == nil {
			return
		}
		if t, ok := s.ownTask(w, r, u, st); ok {
			f(w, r, u, st, t)
		}
	}
}

func (s *Server) listScheduledTasks(w http.ResponseWriter, r *http.Request, u *principal) {
	st := s.sched(w)
	if st == nil {
		return
	}
	s.writeTasks(w, r, st, store.TaskQuery{UserID: u.ID})
}

func (s *Server) listThreadScheduledTasks(w http.ResponseWriter, r *http.Request, u *principal) {
	st := s.sched(w)
	if st == nil {
		return
	}
	tid := r.PathValue("tid")
	if !vpath.ValidID(tid) {
		writeError(w, http.StatusUnprocessableEntity, "Invalid thread id %q", tid)
		return
	}
	s.writeTasks(w, r, st, store.TaskQuery{UserID: u.ID, ThreadID: tid})
}

// writeTasks answers with the tasks q selects.
func (s *Server) writeTasks(w http.ResponseWriter, r *http.Request, st *scheduledTasks, q store.TaskQuery) {
	ts, err := st.tasks.ListScheduledTasks(r.Context(), q)
	if err != nil {
		s.internal(w, "cannot list scheduled tasks", err)
		return
	}
	writeJSON(w, http.StatusOK, tasksJSON(ts))
}

func (s *Server) getScheduledTask(w http.ResponseWriter, _ *http.Request, _ *principal, _ *scheduledTasks, t *store.ScheduledTask) {
	writeJSON(w, http.StatusOK, taskJSON(t))
}

// taskBody is the body of POST and PATCH: DeerFlow's create and update
// requests. A JSON null is the same as a missing key, as there.
type taskBody struct {
	ThreadID     *string        `json:"thread_id"`
	ContextMode  *string        `json:"context_mode"`
	Title        *string        `json:"title"`
	Prompt       *string        `json:"prompt"`
	ScheduleType *string        `json:"schedule_type"`
	ScheduleSpec map[string]any `json:"schedule_spec"`
	Timezone     *string        `json:"timezone"`
}

// check validates the fields present; create also requires DeerFlow's
// required ones. The error is a 422 detail.
func (b *taskBody) check(create bool) error {
	if create {
		for _, f := range []struct {
			name string
			set  bool
		}{{"title", b.Title != nil}, {"prompt", b.Prompt != nil}, {"schedule_type", b.ScheduleType != nil},
			{"schedule_spec", b.ScheduleSpec != nil}, {"timezone", b.Timezone != nil}} {
			if !f.set {
				return fmt.Errorf("body.%s: Field required", f.name)
			}
		}
	}
	if b.ThreadID != nil && !vpath.ValidID(*b.ThreadID) {
		return fmt.Errorf("body.thread_id: invalid thread id %q", *b.ThreadID)
	}
	if b.Title != nil && (*b.Title == "" || utf8.RuneCountInString(*b.Title) > maxTaskTitle) {
		return fmt.Errorf("body.title: must be 1 to %d characters", maxTaskTitle)
	}
	if b.Prompt != nil && (*b.Prompt == "" || len(*b.Prompt) > maxTaskPrompt) {
		return fmt.Errorf("body.prompt: must be 1 to %d bytes", maxTaskPrompt)
	}
	if b.ContextMode != nil && *b.ContextMode != scheduler.FreshThreadPerRun && *b.ContextMode != scheduler.ReuseThread {
		return errors.New("Unsupported context_mode") //lint:ignore ST1005 DeerFlow's detail
	}
	return nil
}

// checkThread answers 404 unless the caller owns thread tid.
func (s *Server) checkThread(w http.ResponseWriter, r *http.Request, u *principal, tid string) bool {
	th, err := s.store.GetThread(r.Context(), tid)
	if err == nil && th.UserID == u.ID {
		return true
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.internal(w, "cannot read the thread", err)
		return false
	}
	writeError(w, http.StatusNotFound, "Thread not found")
	return false
}

// nextFiring parses a schedule and returns its first firing, answering
// 422 as DeerFlow does for a bad schedule or a once time too soon. The
// cron expression comes back normalised in spec.
func (s *Server) nextFiring(w http.ResponseWriter, st *scheduledTasks, typ string, spec map[string]any, tz string) (time.Time, bool) {
	if typ != scheduler.TypeOnce && typ != scheduler.TypeCron {
		writeError(w, http.StatusUnprocessableEntity, "Unsupported schedule_type")
		return time.Time{}, false
	}
	sp, err := scheduler.Parse(typ, spec, tz)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "%v", err)
		return time.Time{}, false
	}
	if typ == scheduler.TypeCron {
		spec["cron"] = sp.Cron()
	}
	now := st.d.Now()
	next, ok := sp.Next(now)
	if typ == scheduler.TypeOnce {
		if !ok {
			writeError(w, http.StatusUnprocessableEntity, "once schedule must be in the future")
			return time.Time{}, false
		}
		if minDelay := st.d.MinOnceDelay(); next.Sub(now) < minDelay {
			writeError(w, http.StatusUnprocessableEntity, "once schedule must be at least %d seconds in the future", int(minDelay.Seconds()))
			return time.Time{}, false
		}
	}
	return next, true
}

func (s *Server) createScheduledTask(w http.ResponseWriter, r *http.Request, u *principal) {
	st := s.sched(w)
	if st == nil {
		return
	}
	var b taskBody
	if !s.decodeJSON(w, r, &b) {
		return
	}
	if err := b.check(true); err != nil {
		writeError(w, http.StatusUnprocessableEntity, "%v", err)
		return
	}
	mode, thread := scheduler.FreshThreadPerRun, ""
	if b.ContextMode != nil {
		mode = *b.ContextMode
	}
	if b.ThreadID != nil {
		thread = *b.ThreadID
	}
	if mode == scheduler.ReuseThread {
		if thread == "" {
			writeError(w, http.StatusUnprocessableEntity, "reuse_thread requires thread_id")
			return
		}
		if !s.checkThread(w, r, u, thread) {
			return
		}
	}
	next, ok := s.nextFiring(w, st, *b.ScheduleType, b.ScheduleSpec, *b.Timezone)
	if !ok {
		return
	}
	existing, err := st.tasks.ListScheduledTasks(r.Context(), store.TaskQuery{UserID: u.ID, Limit: maxTasksPerUser})
	if err != nil {
		s.internal(w, "cannot list scheduled tasks", err)
		return
	}
	if len(existing) >= maxTasksPerUser {
		writeError(w, http.StatusUnprocessableEntity, "at most %d scheduled tasks per user; delete one first", maxTasksPerUser)
		return
	}
	t := &store.ScheduledTask{ID: "task-" + strings.ReplaceAll(uuid.NewString(), "-", ""), UserID: u.ID, ThreadID: thread,
		ContextMode: mode, AssistantID: "lead_agent", Title: *b.Title, Prompt: *b.Prompt, ScheduleType: *b.ScheduleType,
		ScheduleSpec: b.ScheduleSpec, Timezone: *b.Timezone, Status: store.TaskEnabled, OverlapPolicy: "skip", NextRunAt: next}
	if err := st.tasks.CreateScheduledTask(r.Context(), t); err != nil {
		s.internal(w, "cannot create the scheduled task", err)
		return
	}
	writeJSON(w, http.StatusOK, taskJSON(t))
}

// taskBusy answers 409 for a task whose run is going, DeerFlow's
// _ensure_task_mutable.
func taskBusy(w http.ResponseWriter, t *store.ScheduledTask) bool {
	if t.Status == store.TaskRunning {
		writeError(w, http.StatusConflict, "Scheduled task is currently running; retry after the active execution finishes")
		return true
	}
	return false
}

func (s *Server) updateScheduledTask(w http.ResponseWriter, r *http.Request, u *principal, st *scheduledTasks, t *store.ScheduledTask) {
	if taskBusy(w, t) {
		return
	}
	var b taskBody
	if !s.decodeJSON(w, r, &b) {
		return
	}
	b.ScheduleType = nil // not editable, as in DeerFlow
	if err := b.check(false); err != nil {
		writeError(w, http.StatusUnprocessableEntity, "%v", err)
		return
	}
	e := store.TaskEdit{ContextMode: b.ContextMode, ThreadID: b.ThreadID, Title: b.Title, Prompt: b.Prompt, Timezone: b.Timezone}
	mode, thread := t.ContextMode, t.ThreadID
	if b.ContextMode != nil {
		mode = *b.ContextMode
	}
	if b.ThreadID != nil {
		thread = *b.ThreadID
	}
	switch mode {
	case scheduler.ReuseThread:
		if thread == "" {
			writeError(w, http.StatusUnprocessableEntity, "reuse_thread requires thread_id")
			return
		}
		if !s.checkThread(w, r, u, thread) {
			return
		}
	case scheduler.FreshThreadPerRun:
		empty := ""
		e.ThreadID = &empty
	}
	if b.ScheduleSpec != nil || b.Timezone != nil {
		spec, tz := t.ScheduleSpec, t.Timezone
		if b.ScheduleSpec != nil {
			spec = b.ScheduleSpec
		}
		if b.Timezone != nil {
			tz = *b.Timezone
		}
		next, ok := s.nextFiring(w, st, t.ScheduleType, spec, tz)
		if !ok {
			return
		}
		e.ScheduleSpec, e.NextRunAt = spec, &next
		// A finished task rescheduled into the future is armed again:
		// only enabled tasks are claimed.
		if !next.IsZero() && store.TerminalTask(t.Status) {
			enabled := store.TaskEnabled
			e.Status = &enabled
		}
	}
	s.writeEdit(w, r, st, t.ID, e)
}

func (s *Server) writeEdit(w http.ResponseWriter, r *http.Request, st *scheduledTasks, id string, e store.TaskEdit) {
	t, err := st.tasks.EditScheduledTask(r.Context(), id, e)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "Scheduled task not found")
	case err != nil:
		s.internal(w, "cannot update the scheduled task", err)
	default:
		writeJSON(w, http.StatusOK, taskJSON(t))
	}
}

func (s *Server) pauseScheduledTask(w http.ResponseWriter, r *http.Request, _ *principal, st *scheduledTasks, t *store.ScheduledTask) {
	s.setTaskStatus(w, r, st, t, store.TaskPaused)
}

func (s *Server) resumeScheduledTask(w http.ResponseWriter, r *http.Request, _ *principal, st *scheduledTasks, t *store.ScheduledTask) {
	s.setTaskStatus(w, r, st, t, store.TaskEnabled)
}

func (s *Server) setTaskStatus(w http.ResponseWriter, r *http.Request, st *scheduledTasks, t *store.ScheduledTask, status string) {
	if taskBusy(w, t) {
		return
	}
	s.writeEdit(w, r, st, t.ID, store.TaskEdit{Status: &status})
}

func (s *Server) triggerScheduledTask(w http.ResponseWriter, r *http.Request, _ *principal, st *scheduledTasks, t *store.ScheduledTask) {
	o := st.d.Trigger(r.Context(), t)
	switch o.Outcome {
	case scheduler.OutcomeConflict:
		writeError(w, http.StatusConflict, "%s", cmp.Or(o.Error, "Scheduled task trigger conflicted with an active run"))
	case scheduler.OutcomeFailed:
		writeError(w, http.StatusBadGateway, "%s", cmp.Or(o.Error, "Scheduled task trigger failed"))
	default:
		writeJSON(w, http.StatusOK, map[string]any{"id": t.ID, "triggered": true})
	}
}

func (s *Server) deleteScheduledTask(w http.ResponseWriter, r *http.Request, _ *principal, st *scheduledTasks, t *store.ScheduledTask) {
	if err := st.tasks.DeleteScheduledTask(r.Context(), t.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, "Scheduled task not found")
			return
		}
		s.internal(w, "cannot delete the scheduled task", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": t.ID, "deleted": true})
}

// pageParam reads a non-negative integer query parameter within [lo, hi]
// (def when absent); false after a 422.
func pageParam(w http.ResponseWriter, r *http.Request, key string, def, lo, hi int) (int, bool) {
	raw := r.URL.Query().Get(key)
	if raw == "" {
		return def, true
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		writeError(w, http.StatusUnprocessableEntity, "query.%s: must be an integer between %d and %d", key, lo, hi)
		return 0, false
	}
	return n, true
}

func (s *Server) listScheduledTaskRuns(w http.ResponseWriter, r *http.Request, u *principal) {
	st := s.sched(w)
	if st == nil {
		return
	}
	limit, ok := pageParam(w, r, "limit", 50, 1, maxTaskRunsPage)
	if !ok {
		return
	}
	offset, ok := pageParam(w, r, "offset", 0, 0, 1<<30)
	if !ok {
		return
	}
	t, ok := s.ownTask(w, r, u, st)
	if !ok {
		return
	}
	runs, err := st.tasks.ListScheduledTaskRuns(r.Context(), t.ID, limit, offset)
	if err != nil {
		s.internal(w, "cannot list the scheduled task's runs", err)
		return
	}
	out := make([]any, 0, len(runs))
	for _, x := range runs {
		out = append(out, taskRunJSON(x))
	}
	writeJSON(w, http.StatusOK, out)
}
