package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// runRequest is the LangGraph run body (POST .../runs/stream).
type runRequest struct {
	AssistantID string `json:"assistant_id"`
	Input       *struct {
		Messages []json.RawMessage `json:"messages"`
	} `json:"input"`
	Config struct {
		Configurable map[string]any `json:"configurable"`
	} `json:"config"`
	Context      map[string]any  `json:"context"`
	Metadata     map[string]any  `json:"metadata"`
	StreamMode   json.RawMessage `json:"stream_mode"`
	OnDisconnect string          `json:"on_disconnect"`
	IfNotExists  string          `json:"if_not_exists"`
}

// runContext merges config.configurable and context (context wins), as
// DeerFlow reads run options from either.
func (q *runRequest) runContext() map[string]any {
	out := maps.Clone(q.Config.Configurable)
	if out == nil {
		out = map[string]any{}
	}
	maps.Copy(out, q.Context)
	return out
}

func ctxString(c map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := c[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func ctxBool(c map[string]any, key string) (bool, bool) {
	switch v := c[key].(type) {
	case bool:
		return v, true
	case string:
		b, err := strconv.ParseBool(v)
		return b, err == nil
	}
	return false, false
}

// streamRun is POST /api/threads/{tid}/runs/stream: start a run (creating
// the thread if needed) and stream it.
func (s *Server) streamRun(w http.ResponseWriter, r *http.Request, u *principal) {
	tid := r.PathValue("tid")
	if !vpath.ValidID(tid) {
		writeError(w, http.StatusUnprocessableEntity, "Invalid thread id %q", tid)
		return
	}
	var req runRequest
	if !s.decodeJSON(w, r, &req) {
		return
	}
	modes, err := parseStreamModes(req.StreamMode)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "%v", err)
		return
	}
	var msgs []model.Message
	if req.Input != nil {
		for i, raw := range req.Input.Messages {
			m, err := parseMessage(raw)
			if err != nil {
				writeError(w, http.StatusUnprocessableEntity, "input.messages[%d]: %v", i, err)
				return
			}
			msgs = append(msgs, prepareInput(m))
		}
	}
	if s.answerElicitation(w, r, u, tid, &req, msgs) {
		return
	}
	rc := req.runContext()
	agentName := ctxString(rc, "agent_name")
	th, status := s.threadForRun(r.Context(), u, tid, agentName, req.IfNotExists != "reject")
	if status != 0 {
		writeError(w, status, "Thread %s not found", tid)
		return
	}
	rn, status, err := s.startRun(r.Context(), u, th, rc, modes, msgs)
	if err != nil {
		writeError(w, status, "%v", err)
		return
	}
	s.serveStream(w, r, rn, 0, req.OnDisconnect != "continue")
}

// prepareInput gives a human message the uploaded-files block DeerFlow's
// uploads middleware adds, so that the model knows the attachments; the
// frontend strips the block for display. The user's own text is kept
// under agent.OriginalUserContentKey, which is the server's to set (a
// client's value is dropped): the input sanitisation frames only that
// text and leaves the server's block alone.
func prepareInput(m model.Message) model.Message {
	if _, ok := m.Meta[agent.OriginalUserContentKey]; ok {
		m.Meta = maps.Clone(m.Meta)
		delete(m.Meta, agent.OriginalUserContentKey)
	}
	files, _ := m.Meta["files"].([]any)
	if m.Role != model.RoleUser || len(files) == 0 || strings.Contains(m.Content, "<uploaded_files>") {
		return m
	}
	m.Meta = maps.Clone(m.Meta)
	m.Meta[agent.OriginalUserContentKey] = m.Content
	var b strings.Builder
	b.WriteString("<uploaded_files>\nThe user uploaded these files (read them with read_file):\n")
	for _, f := range files {
		fm, _ := f.(map[string]any)
		name, _ := fm["filename"].(string)
		path, _ := fm["path"].(string)
		if path == "" {
			path = vpath.Uploads + "/" + name
		}
		// A client names the files: a crafted name must not close the
		// block or forge a tag (DeerFlow's uploads middleware neutralises
		// them the same way).
		fmt.Fprintf(&b, "- %s (%s)\n", agent.NeutralizeUntrustedTags(name), agent.NeutralizeUntrustedTags(path))
	}
	b.WriteString("</uploaded_files>\n\n")
	m.Content = b.String() + m.Content
	return m
}

// threadForRun returns the caller's thread tid, creating it when missing
// and create is set. The status is 404 for a missing (or another user's)
// thread, 500 for a store failure.
func (s *Server) threadForRun(ctx context.Context, u *principal, tid, agentName string, create bool) (*store.Thread, int) {
	th, err := s.store.GetThread(ctx, tid)
	switch {
	case err == nil && th.UserID == u.ID:
		return th, 0
	case err == nil, !errors.Is(err, store.ErrNotFound):
		if err != nil {
			s.logger.Error("thread lookup failed", "thread_id", tid, "err", err)
			return nil, http.StatusInternalServerError
		}
		return nil, http.StatusNotFound
	case !create:
		return nil, http.StatusNotFound
	}
	th = &store.Thread{ID: tid, UserID: u.ID, AgentName: agentName, Status: store.ThreadIdle, Metadata: map[string]any{}}
	if agentName != "" {
		th.Metadata["agent_name"] = agentName
	}
	if err := s.store.CreateThread(ctx, th); err != nil {
		if errors.Is(err, store.ErrExists) { // created concurrently
			return s.threadForRun(ctx, u, tid, agentName, false)
		}
		s.logger.Error("cannot create thread", "thread_id", tid, "err", err)
		return nil, http.StatusInternalServerError
	}
	return th, 0
}

// startRun claims the thread, builds the lead agent and starts the run's
// goroutine. The status goes with a non-nil error.
func (s *Server) startRun(ctx context.Context, u *principal, th *store.Thread, rc map[string]any, modes streamMode, msgs []model.Message) (*run, int, error) {
	rid := uuid.NewString()
	release, err := s.locks.Acquire(ctx, th.ID, rid)
	if errors.Is(err, ErrThreadBusy) {
		return nil, http.StatusConflict, fmt.Errorf("Thread %s already has an active run; wait for it or cancel it", th.ID) //lint:ignore ST1005 the HTTP detail the frontend shows
	}
	if err != nil {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("cannot lock thread %s: %v", th.ID, err)
	}
	trustedContext(rc, u)
	req := agent.Request{ThreadID: th.ID, UserID: u.ID, UserRole: u.Role, RunID: rid,
		AgentName: ctxString(rc, "agent_name"), ModelName: ctxString(rc, "model_name", "model"),
		ChannelName: ctxString(rc, "channel_name"), Context: rc, Query: userQuery(msgs)}
	req.IsBootstrap, _ = ctxBool(rc, "is_bootstrap")
	req.SubagentEnabled, _ = ctxBool(rc, "subagent_enabled")
	req.NonInteractive, _ = ctxBool(rc, "non_interactive")
	if b, ok := ctxBool(rc, "thinking_enabled"); ok {
		req.ThinkingEnabled = &b
	}
	if n, ok := rc["max_concurrent_subagents"].(float64); ok {
		req.MaxConcurrentSubagents = int(n)
	}
	lead, err := s.factory.Build(ctx, req)
	if err != nil {
		release()
		switch {
		case errors.Is(err, agent.ErrAgentNotFound):
			return nil, http.StatusNotFound, err
		case errors.As(err, new(*customagent.NameError)):
			return nil, http.StatusUnprocessableEntity, err
		case isModelDenied(err):
			return nil, http.StatusForbidden, err
		}
		s.logger.Error("cannot build the lead agent", "thread_id", th.ID, "err", err)
		return nil, http.StatusBadRequest, fmt.Errorf("cannot start the run: %v", err)
	}
	for i := range msgs {
		if msgs[i].Role == model.RoleUser {
			msgs[i].Meta = withKey(msgs[i].Meta, "run_id", rid)
		}
	}

	runCtx, cancel := context.WithCancel(runContext(s.baseCtx, ctx))
	rn := newRun(rid, th.ID, u.ID, modes, cancel)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		release()
		return nil, http.StatusServiceUnavailable, errors.New("the gateway is shutting down")
	}
	s.runs[rid] = rn
	s.wg.Add(1)
	s.mu.Unlock()
	rn.emit("metadata", map[string]any{"run_id": rid, "thread_id": th.ID, "attempt": 1})
	go s.execute(runCtx, rn, lead, msgs, release)
	return rn, 0, nil
}

// execute runs the agent and turns its events into frames. The thread is
// released and the run unregistered before the end frame, so a client
// that sees the end can start the next run at once.
func (s *Server) execute(ctx context.Context, rn *run, lead *agent.Lead, msgs []model.Message, release func()) {
	defer s.wg.Done()
	defer close(rn.finished)
	defer rn.cancel()
	for ev := range lead.Agent.Run(ctx, lead.Input(msgs...)) {
		rn.handle(ev)
	}
	s.mu.Lock()
	delete(s.runs, rn.id)
	s.mu.Unlock()
	release()
	rn.end()
}

func (s *Server) activeRun(id string) *run {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.runs[id]
}

// stampMessages is the model middleware the gateway adds: it tells the
// run which id the assistant message being generated will have, so that
// streamed deltas carry the id of the final message, and records the run
// id in the message's additional_kwargs.
func (s *Server) stampMessages(next tool.ModelHandler) tool.ModelHandler {
	return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
		rn := s.activeRun(call.RunID)
		if rn == nil {
			return next(ctx, call)
		}
		id := "lc_run--" + uuid.NewString()
		rn.msgID.Store(&id)
		resp, err := next(ctx, call)
		if resp != nil {
			if resp.Message.ID == "" {
				resp.Message.ID = id
			}
			resp.Message.Meta = withKey(resp.Message.Meta, "run_id", call.RunID)
		}
		return resp, err
	}
}

// withKey returns a copy of m with k set to v.
func withKey(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	maps.Copy(out, m)
	out[k] = v
	return out
}

// observedStore is the store the gateway hands to its agents: after every
// checkpoint it emits the state as a values frame of the run.
type observedStore struct {
	store.Store
	onCheckpoint func(cp *store.Checkpoint)
}

// PutCheckpoint implements store.Store.
func (o *observedStore) PutCheckpoint(ctx context.Context, cp *store.Checkpoint) error {
	if err := o.Store.PutCheckpoint(ctx, cp); err != nil {
		return err
	}
	o.onCheckpoint(cp)
	return nil
}

// onCheckpoint emits the values frame of a checkpoint. It runs on the
// run's goroutine and converts the state before returning (the agent goes
// on changing it).
func (s *Server) onCheckpoint(cp *store.Checkpoint) {
	rn := s.activeRun(cp.RunID)
	if rn == nil || rn.modes&modeValues == 0 {
		return
	}
	rn.emitValues(stateValues(cp.State))
}

// startSSE sends the headers of a run's event stream (with the
// Content-Location the frontend re-attaches with) and lifts the server's
// read and write deadlines: a stream lasts as long as its run.
func startSSE(w http.ResponseWriter, threadID, runID string) *http.ResponseController {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Content-Location", "/api/threads/"+threadID+"/runs/"+runID)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	return rc
}

// serveStream writes a run's frames after the first `after` as SSE until
// the run ends or the client goes away (which cancels the run when
// cancelOnDisconnect is set).
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, rn *run, after int, cancelOnDisconnect bool) {
	s.serveStreamFrom(w, r, rn, after, cancelOnDisconnect, nil)
}

// serveStreamFrom is serveStream with a first frame written before the
// run's own (nil for none). A stream that has sent every frame while the
// run waits for the human's answer to an MCP server's question ends
// with an end frame and leaves the run going (elicit.go): the answer
// follows as a new request.
func (s *Server) serveStreamFrom(w http.ResponseWriter, r *http.Request, rn *run, after int, cancelOnDisconnect bool, first []byte) {
	rc := startSSE(w, rn.threadID, rn.id)
	beat := time.NewTicker(s.heartbeat)
	defer beat.Stop()
	next := max(after, 0)
	if first != nil {
		if _, err := w.Write(first); err != nil {
			s.disconnected(rn, cancelOnDisconnect)
			return
		}
	}
	for {
		frames, done, wake := rn.read(next)
		for _, f := range frames {
			if _, err := w.Write(f); err != nil {
				s.disconnected(rn, cancelOnDisconnect)
				return
			}
		}
		next += len(frames)
		if len(frames) > 0 {
			if err := rc.Flush(); err != nil {
				s.disconnected(rn, cancelOnDisconnect)
				return
			}
			beat.Reset(s.heartbeat)
		}
		if done {
			return
		}
		if rn.suspend(next) {
			_, _ = w.Write([]byte("event: end\ndata: null\n\n"))
			_ = rc.Flush()
			return
		}
		select {
		case <-wake:
		case <-beat.C:
			if _, err := w.Write([]byte(": heartbeat\n\n")); err != nil || rc.Flush() != nil {
				s.disconnected(rn, cancelOnDisconnect)
				return
			}
		case <-r.Context().Done():
			s.disconnected(rn, cancelOnDisconnect)
			return
		}
	}
}

func (s *Server) disconnected(rn *run, cancel bool) {
	if cancel {
		s.logger.Info("client disconnected; cancelling the run", "run_id", rn.id)
		rn.requestCancel()
	}
}

// runJSON is LangGraph's Run object.
func runJSON(id, threadID, status string, created, updated time.Time, meta map[string]any) map[string]any {
	if meta == nil {
		meta = map[string]any{}
	}
	return map[string]any{"run_id": id, "thread_id": threadID, "assistant_id": "lead_agent", "status": status,
		"metadata": meta, "kwargs": map[string]any{}, "multitask_strategy": "reject",
		"created_at": isoTime(created), "updated_at": isoTime(updated)}
}

// findRun returns the caller's run rid of thread tid: the active run
// (status "running") or the stored one. ok is false after an error answer.
func (s *Server) findRun(w http.ResponseWriter, r *http.Request, u *principal) (map[string]any, *run, bool) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return nil, nil, false
	}
	rid := r.PathValue("rid")
	if rn := s.activeRun(rid); rn != nil && rn.threadID == th.ID && rn.userID == u.ID {
		return runJSON(rn.id, rn.threadID, store.RunRunning, rn.createdAt, time.Now(), nil), rn, true
	}
	sr, err := s.store.GetRun(r.Context(), rid)
	if err != nil || sr.ThreadID != th.ID || sr.UserID != u.ID {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.logger.Error("run lookup failed", "run_id", rid, "err", err)
		}
		writeError(w, http.StatusNotFound, "Run %s not found", rid)
		return nil, nil, false
	}
	return storedRunJSON(sr), nil, true
}

func storedRunJSON(sr *store.Run) map[string]any {
	meta := maps.Clone(sr.Metadata)
	if meta == nil {
		meta = map[string]any{}
	}
	if sr.StopReason != "" {
		meta["stop_reason"] = sr.StopReason
	}
	if sr.Error != "" {
		meta["error"] = sr.Error
	}
	return runJSON(sr.ID, sr.ThreadID, apiRunStatus(sr), sr.CreatedAt, sr.UpdatedAt, meta)
}

// getRun is GET /api/threads/{tid}/runs/{rid}.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request, u *principal) {
	if out, _, ok := s.findRun(w, r, u); ok {
		writeJSON(w, http.StatusOK, out)
	}
}

// listRuns is GET /api/threads/{tid}/runs.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	runs, err := s.store.ListRuns(r.Context(), th.ID)
	if err != nil {
		s.internal(w, "cannot list runs", err)
		return
	}
	limit, offset := queryInt(r, "limit", 10), queryInt(r, "offset", 0)
	out := []any{}
	for i, sr := range runs {
		if i < offset || len(out) >= limit {
			continue
		}
		out = append(out, storedRunJSON(sr))
	}
	writeJSON(w, http.StatusOK, out)
}

// cancelRun is POST /api/threads/{tid}/runs/{rid}/cancel: 202 at once, or
// 204 once the run has ended with ?wait=1; 409 "not cancellable" for a
// run that already ended.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request, u *principal) {
	out, rn, ok := s.findRun(w, r, u)
	if !ok {
		return
	}
	if rn == nil {
		writeError(w, http.StatusConflict, "Run %s is not cancellable (status: %v)", out["run_id"], out["status"])
		return
	}
	rn.requestCancel()
	if wait, _ := strconv.ParseBool(r.URL.Query().Get("wait")); wait {
		select {
		case <-rn.finished:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// joinRun is GET /api/threads/{tid}/runs/{rid}/stream: rejoin an active
// run's stream after the Last-Event-ID frame (-1 or none: from the start).
func (s *Server) joinRun(w http.ResponseWriter, r *http.Request, u *principal) {
	out, rn, ok := s.findRun(w, r, u)
	if !ok {
		return
	}
	if rn == nil {
		writeError(w, http.StatusConflict, "Run %s is not active on this worker and cannot be streamed (status: %v)", out["run_id"], out["status"])
		return
	}
	after := 0
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			after = n
		}
	}
	cancelOnDisconnect, _ := strconv.ParseBool(r.URL.Query().Get("cancel_on_disconnect"))
	s.serveStream(w, r, rn, after, cancelOnDisconnect)
}

func queryInt(r *http.Request, key string, def int) int {
	if n, err := strconv.Atoi(r.URL.Query().Get(key)); err == nil && n >= 0 {
		return n
	}
	return def
}

func (s *Server) internal(w http.ResponseWriter, what string, err error) {
	s.logger.Error(what, "err", err)
	writeError(w, http.StatusInternalServerError, "%s", what)
}
