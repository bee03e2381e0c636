package gateway

import (
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/store"
)

// compactThread is POST /api/threads/{tid}/compact {force, agent_name?,
// model_name?}: the thread's older messages are summarised into its
// summary_text now and a new checkpoint keeps the recent ones (DeerFlow's
// manual compaction). The summary is written by the model the request
// names, else the thread's custom agent's, else the default (or by
// summarization.model_name, with that as its fallback). force (default
// true) ignores the triggers. 409 while a run is active or when
// summarization is disabled, 500 when no summary could be written.
func (s *Server) compactThread(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	var body struct {
		Force     *bool  `json:"force"`
		AgentName string `json:"agent_name"`
		ModelName string `json:"model_name"`
	}
	if !s.decodeJSON(w, r, &body) {
		return
	}
	force := body.Force == nil || *body.Force
	agentName := body.AgentName
	if agentName == "" {
		agentName = th.AgentName
	}
	release, err := s.locks.Acquire(r.Context(), th.ID, "compact-"+uuid.NewString())
	if err != nil {
		writeError(w, http.StatusConflict, "Thread has a run in flight. Compact after the run finishes.")
		return
	}
	defer release()
	res, err := s.factory.Compact(r.Context(), agent.Request{ThreadID: th.ID, UserID: u.ID, UserRole: u.Role, AgentName: agentName,
		ModelName: body.ModelName}, force)
	switch {
	case isModelDenied(err):
		writeError(w, http.StatusForbidden, "%v", err)
		return
	case errors.Is(err, agent.ErrCompactionDisabled):
		writeError(w, http.StatusConflict, "Context compaction is disabled.")
		return
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "Thread %s not found", th.ID)
		return
	case errors.Is(err, agent.ErrCompactionFailed):
		s.logger.Warn("thread compaction failed", "thread_id", th.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "Failed to compact thread context.")
		return
	case err != nil:
		s.internal(w, "Failed to compact thread context.", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"thread_id": res.ThreadID, "compacted": res.Compacted, "reason": nilIfEmpty(res.Reason),
		"removed_message_count": res.RemovedMessageCount, "preserved_message_count": res.PreservedMessageCount,
		"summary_updated": res.SummaryUpdated, "checkpoint_id": nilIfEmpty(res.CheckpointID), "total_tokens": res.TotalTokens,
	})
}
