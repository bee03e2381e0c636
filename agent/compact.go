package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/antlerhq/antler/store"
)

// Errors of Agent.Compact.
var (
	// ErrCompactionDisabled: the agent has no Summarization options.
	ErrCompactionDisabled = errors.New("agent: context compaction is disabled")
	// ErrCompactionFailed wraps a summary that could not be written.
	ErrCompactionFailed = errors.New("agent: summary generation failed")
)

// CompactResult is the outcome of Agent.Compact, the body of DeerFlow's
// POST /api/threads/{id}/compact.
type CompactResult struct {
	ThreadID  string `json:"thread_id"`
	Compacted bool   `json:"compacted"`
	// Reason is "not_enough_messages" when nothing was compacted.
	Reason                string `json:"reason,omitempty"`
	RemovedMessageCount   int    `json:"removed_message_count"`
	PreservedMessageCount int    `json:"preserved_message_count"`
	SummaryUpdated        bool   `json:"summary_updated"`
	CheckpointID          string `json:"checkpoint_id,omitempty"`
	TotalTokens           int    `json:"total_tokens"`
}

// Compact summarises the older messages of a stored thread now and saves
// the result as its next checkpoint (DeerFlow's manual compaction); force
// ignores the triggers. The caller makes sure no run is in flight on the
// thread. It returns ErrCompactionDisabled without Summarization options,
// store.ErrNotFound for a thread without a checkpoint, and
// ErrCompactionFailed (wrapped) when no summary could be written.
func (a *Agent) Compact(ctx context.Context, threadID string, force bool) (*CompactResult, error) {
	if a.summarizer == nil {
		return nil, ErrCompactionDisabled
	}
	s := a.opts.Store
	if s == nil {
		return nil, errors.New("agent: compaction needs a store")
	}
	cp, err := s.LatestCheckpoint(ctx, threadID)
	if err != nil {
		return nil, err
	}
	res := &CompactResult{ThreadID: threadID, Reason: "not_enough_messages"}
	if cp.State == nil || len(cp.State.Messages) == 0 {
		return res, nil
	}
	st := cp.State.Clone()
	c, err := a.summarizer.compact(ctx, st, force, a.logger.With("thread_id", threadID), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCompactionFailed, err)
	}
	if c == nil {
		return res, nil
	}
	st.Messages, st.SummaryText = c.preserved, c.Summary
	next := &store.Checkpoint{ThreadID: threadID, ParentID: cp.ID, RunID: cp.RunID, Step: cp.Step + 1, State: st,
		Metadata: map[string]any{"source": "update", "writes": "manual_compaction"}}
	if err := s.PutCheckpoint(ctx, next); err != nil {
		return nil, fmt.Errorf("agent: checkpoint: %w", err)
	}
	return &CompactResult{ThreadID: threadID, Compacted: true, RemovedMessageCount: c.Removed,
		PreservedMessageCount: c.Preserved, SummaryUpdated: true, CheckpointID: next.ID, TotalTokens: c.TotalTokens}, nil
}
