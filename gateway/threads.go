package gateway

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"os"
	"slices"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/vpath"
)

// pinnedKey is the thread metadata key DeerFlow's sidebar pins with.
const pinnedKey = "deerflow_pinned"

// ownThread loads thread {tid} of the caller; another user's thread is
// answered exactly like a missing one (404).
func (s *Server) ownThread(w http.ResponseWriter, r *http.Request, u *principal) (*store.Thread, bool) {
	tid := r.PathValue("tid")
	th, err := s.store.GetThread(r.Context(), tid)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.internal(w, "cannot read the thread", err)
		return nil, false
	}
	if err != nil || th.UserID != u.ID {
		writeError(w, http.StatusNotFound, "Thread %s not found", tid)
		return nil, false
	}
	return th, true
}

// threadJSON is LangGraph's Thread object.
func threadJSON(th *store.Thread, values map[string]any) map[string]any {
	meta := maps.Clone(th.Metadata)
	if meta == nil {
		meta = map[string]any{}
	}
	if _, ok := meta["agent_name"]; !ok && th.AgentName != "" {
		meta["agent_name"] = th.AgentName
	}
	if values == nil {
		values = map[string]any{"title": nilIfEmpty(th.Title)}
	}
	status := th.Status
	if status == "" {
		status = store.ThreadIdle
	}
	return map[string]any{"thread_id": th.ID, "created_at": isoTime(th.CreatedAt), "updated_at": isoTime(th.UpdatedAt),
		"metadata": meta, "status": status, "values": values, "interrupts": map[string]any{}}
}

// createThread is POST /api/threads: a client-chosen id is accepted; an
// existing thread of the caller is returned unchanged (409 with
// if_exists "raise"); another user's id is refused with 403.
func (s *Server) createThread(w http.ResponseWriter, r *http.Request, u *principal) {
	var body struct {
		ThreadID string         `json:"thread_id"`
		Metadata map[string]any `json:"metadata"`
		IfExists string         `json:"if_exists"`
	}
	if !s.decodeJSON(w, r, &body) {
		return
	}
	if body.ThreadID == "" {
		body.ThreadID = uuid.NewString()
	}
	if !vpath.ValidID(body.ThreadID) {
		writeError(w, http.StatusUnprocessableEntity, "Invalid thread id %q (letters, digits, '-', '_'; at most %d)", body.ThreadID, vpath.MaxIDLen)
		return
	}
	th := &store.Thread{ID: body.ThreadID, UserID: u.ID, Status: store.ThreadIdle, Metadata: body.Metadata}
	if th.Metadata == nil {
		th.Metadata = map[string]any{}
	}
	th.AgentName, _ = th.Metadata["agent_name"].(string)
	err := s.store.CreateThread(r.Context(), th)
	if errors.Is(err, store.ErrExists) {
		old, gerr := s.store.GetThread(r.Context(), body.ThreadID)
		switch {
		case gerr != nil:
			s.internal(w, "cannot read the thread", gerr)
		case old.UserID != u.ID:
			writeError(w, http.StatusForbidden, "Thread id %s is not available", body.ThreadID)
		case body.IfExists == "raise":
			writeError(w, http.StatusConflict, "Thread %s already exists", body.ThreadID)
		default:
			writeJSON(w, http.StatusOK, threadJSON(old, nil))
		}
		return
	}
	if err != nil {
		s.internal(w, "cannot create the thread", err)
		return
	}
	writeJSON(w, http.StatusOK, threadJSON(th, nil))
}

// getThread is GET /api/threads/{tid}; values are the latest state.
func (s *Server) getThread(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	values := map[string]any{"title": nilIfEmpty(th.Title)}
	cp, err := s.store.LatestCheckpoint(r.Context(), th.ID)
	switch {
	case err == nil:
		values = stateValues(cp.State)
	case !errors.Is(err, store.ErrNotFound):
		s.internal(w, "cannot read the thread state", err)
		return
	}
	writeJSON(w, http.StatusOK, threadJSON(th, values))
}

// searchThreads is POST /api/threads/search (the sidebar): the caller's
// threads matching the exact-match metadata and status filters, pinned
// first, then most recently updated first, paged by limit and offset.
func (s *Server) searchThreads(w http.ResponseWriter, r *http.Request, u *principal) {
	var body struct {
		Limit    *int           `json:"limit"`
		Offset   int            `json:"offset"`
		Metadata map[string]any `json:"metadata"`
		Status   string         `json:"status"`
		IDs      []string       `json:"ids"`
	}
	if !s.decodeJSON(w, r, &body) {
		return
	}
	limit := 10
	if body.Limit != nil {
		limit = min(max(*body.Limit, 1), 1000)
	}
	offset := max(body.Offset, 0)
	q := store.ThreadQuery{UserID: u.ID, Status: body.Status, Metadata: body.Metadata}
	ctx := r.Context()

	// Pinned threads come first: fetch them all (a handful), then enough
	// of the general list to fill the page after skipping pinned ones.
	pq := q
	pq.Metadata = withKey(q.Metadata, pinnedKey, true)
	pq.Limit = 10_000
	pinned, err := s.store.SearchThreads(ctx, pq)
	if err != nil {
		s.internal(w, "cannot search threads", err)
		return
	}
	if v, ok := q.Metadata[pinnedKey]; ok && v != true {
		pinned = nil // the filter itself excludes pinned threads
	}
	isPinned := map[string]bool{}
	for _, th := range pinned {
		isPinned[th.ID] = true
	}
	q.Offset, q.Limit = 0, offset+limit+len(pinned)
	all, err := s.store.SearchThreads(ctx, q)
	if err != nil {
		s.internal(w, "cannot search threads", err)
		return
	}
	ordered := slices.Clone(pinned)
	for _, th := range all {
		if !isPinned[th.ID] {
			ordered = append(ordered, th)
		}
	}
	if len(body.IDs) > 0 {
		ordered = slices.DeleteFunc(ordered, func(th *store.Thread) bool { return !slices.Contains(body.IDs, th.ID) })
	}
	out := []any{}
	for i := offset; i < len(ordered) && len(out) < limit; i++ {
		out = append(out, threadJSON(ordered[i], nil))
	}
	writeJSON(w, http.StatusOK, out)
}

// patchThread is PATCH /api/threads/{tid}: metadata is merged (a null
// value removes the key).
func (s *Server) patchThread(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	var body struct {
		Metadata map[string]any `json:"metadata"`
	}
	if !s.decodeJSON(w, r, &body) {
		return
	}
	if th.Metadata == nil {
		th.Metadata = map[string]any{}
	}
	for k, v := range body.Metadata {
		if v == nil {
			delete(th.Metadata, k)
		} else {
			th.Metadata[k] = v
		}
	}
	if name, ok := th.Metadata["agent_name"].(string); ok && th.AgentName == "" {
		th.AgentName = name
	}
	if err := s.store.UpdateThread(r.Context(), th); err != nil {
		s.internal(w, "cannot update the thread", err)
		return
	}
	if fresh, err := s.store.GetThread(r.Context(), th.ID); err == nil {
		th = fresh
	}
	writeJSON(w, http.StatusOK, threadJSON(th, nil))
}

// deleteThread is DELETE /api/threads/{tid}: an active run is cancelled,
// then the thread, its checkpoints and runs, and its files are removed.
func (s *Server) deleteThread(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	s.mu.RLock()
	var active []*run
	for _, rn := range s.runs {
		if rn.threadID == th.ID {
			active = append(active, rn)
		}
	}
	s.mu.RUnlock()
	for _, rn := range active {
		rn.requestCancel()
		select {
		case <-rn.finished:
		case <-r.Context().Done():
			return
		}
	}
	if err := s.store.DeleteThread(r.Context(), th.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.internal(w, "cannot delete the thread", err)
		return
	}
	if tp, err := s.layout.ThreadPaths(u.ID, th.ID); err == nil {
		if err := os.RemoveAll(tp.Base); err != nil {
			s.logger.Warn("cannot remove the thread's files", "thread_id", th.ID, "err", err)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "Thread " + th.ID + " deleted"})
}

// checkpointJSON is one element of LangGraph's state history (and the
// state itself). It carries no checkpoint object: the SDK would send it
// back in the next run, which Antler does not resume from.
func checkpointJSON(cp *store.Checkpoint) map[string]any {
	meta := maps.Clone(cp.Metadata)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["step"] = cp.Step
	if cp.RunID != "" {
		meta["run_id"] = cp.RunID
	}
	return map[string]any{"values": stateValues(cp.State), "next": []string{}, "tasks": []any{},
		"metadata": meta, "created_at": isoTime(cp.CreatedAt), "checkpoint_id": cp.ID,
		"parent_checkpoint_id": nilIfEmpty(cp.ParentID)}
}

// history is POST (and GET) /api/threads/{tid}/history: checkpoints
// newest first, [] for a thread without any.
func (s *Server) history(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	var body struct {
		Limit  *int            `json:"limit"`
		Before json.RawMessage `json:"before"`
	}
	if r.Method == http.MethodPost && !s.decodeJSON(w, r, &body) {
		return
	}
	limit := 10
	if body.Limit != nil {
		limit = min(max(*body.Limit, 1), 1000)
	} else if r.Method == http.MethodGet {
		limit = min(max(queryInt(r, "limit", 10), 1), 1000)
	}
	cps, err := s.store.ListCheckpoints(r.Context(), th.ID, limit, beforeID(body.Before))
	if err != nil {
		s.internal(w, "cannot read the thread history", err)
		return
	}
	out := make([]any, 0, len(cps))
	for i, cp := range cps {
		entry := checkpointJSON(cp)
		if i == 0 && len(body.Before) == 0 { // the newest: with the MCP questions waiting (elicit.go)
			entry["values"] = s.withPendingCards(th.ID, entry["values"].(map[string]any))
		}
		out = append(out, entry)
	}
	writeJSON(w, http.StatusOK, out)
}

// beforeID reads history's before: a checkpoint id, or a config
// {"configurable": {"checkpoint_id": ...}}.
func beforeID(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var id string
	if json.Unmarshal(raw, &id) == nil {
		return id
	}
	var cfg struct {
		Configurable struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"configurable"`
		CheckpointID string `json:"checkpoint_id"`
	}
	if json.Unmarshal(raw, &cfg) == nil {
		if cfg.Configurable.CheckpointID != "" {
			return cfg.Configurable.CheckpointID
		}
		return cfg.CheckpointID
	}
	return ""
}

// getState is GET /api/threads/{tid}/state.
func (s *Server) getState(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	cp, err := s.store.LatestCheckpoint(r.Context(), th.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeJSON(w, http.StatusOK, map[string]any{"values": stateValues(nil), "next": []string{}, "tasks": []any{},
			"metadata": map[string]any{}, "created_at": nil, "checkpoint_id": nil, "parent_checkpoint_id": nil})
	case err != nil:
		s.internal(w, "cannot read the thread state", err)
	default:
		out := checkpointJSON(cp)
		out["values"] = s.withPendingCards(th.ID, out["values"].(map[string]any))
		writeJSON(w, http.StatusOK, out)
	}
}

// updateState is POST /api/threads/{tid}/state: the frontend renames a
// thread with {"values": {"title": ...}}. Only title is writable; the
// change is a new checkpoint. 409 while a run is active.
func (s *Server) updateState(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	var body struct {
		Values map[string]json.RawMessage `json:"values"`
	}
	if !s.decodeJSON(w, r, &body) {
		return
	}
	var title *string
	for k, raw := range body.Values {
		if k != "title" {
			writeError(w, http.StatusUnprocessableEntity, "Only the title of a thread's state can be updated, not %q", k)
			return
		}
		var t string
		if err := json.Unmarshal(raw, &t); err != nil {
			writeError(w, http.StatusUnprocessableEntity, "title must be a string")
			return
		}
		title = &t
	}
	release, err := s.locks.Acquire(r.Context(), th.ID, "state-update-"+uuid.NewString())
	if err != nil {
		writeError(w, http.StatusConflict, "Thread %s has an active run", th.ID)
		return
	}
	defer release()
	state, parent, step := &thread.State{}, "", 0
	cp, err := s.store.LatestCheckpoint(r.Context(), th.ID)
	switch {
	case err == nil:
		state, parent, step = cp.State, cp.ID, cp.Step+1
	case !errors.Is(err, store.ErrNotFound):
		s.internal(w, "cannot read the thread state", err)
		return
	}
	if title != nil {
		state.Title = *title
	}
	next := &store.Checkpoint{ThreadID: th.ID, ParentID: parent, Step: step, State: state,
		Metadata: map[string]any{"source": "update"}}
	if err := s.store.PutCheckpoint(r.Context(), next); err != nil {
		s.internal(w, "cannot update the thread state", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"checkpoint": map[string]any{"thread_id": th.ID, "checkpoint_ns": "",
		"checkpoint_id": next.ID}, "checkpoint_id": next.ID})
}
