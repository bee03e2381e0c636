package mcptasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/antlerhq/antler/store"
)

// Run polls until ctx ends: a pass at once (so that tasks whose leases
// expired while no runtime ran are taken over at start), then one every
// poll_interval_seconds. A failed pass is logged and the next one runs.
func (r *Runtime) Run(ctx context.Context) {
	tick := time.NewTicker(r.cfg.PollInterval())
	defer tick.Stop()
	for {
		if err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
			r.logger.Error("MCP task poll failed; retrying at the next interval", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// RunOnce makes one pass: it claims the tasks whose cancellation is due
// and cancels them at their servers, then claims the tasks whose poll is
// due and polls them, then (with a Notifier attached) delivers the due
// notices, at most max_concurrent_polls of each at once. Each
// call to a server is bounded by lease_seconds: an answer after the lease
// would be refused anyway. Errors of single tasks are recorded on them;
// the error returned is the store's.
func (r *Runtime) RunOnce(ctx context.Context) error {
	st, err := r.tasks()
	if err != nil {
		return err
	}
	for _, cancel := range []bool{true, false} {
		claimed, err := st.ClaimMCPTasks(ctx, store.MCPTaskClaim{Cancel: cancel, Owner: r.owner, Now: r.clock(),
			Lease: r.cfg.Lease(), Limit: r.cfg.MaxConcurrentPolls})
		if err != nil {
			return err
		}
		var wg sync.WaitGroup
		for _, t := range claimed {
			wg.Go(func() { r.settle(ctx, st, t, cancel) })
		}
		wg.Wait()
	}
	if n := r.attachedNotifier(); n != nil {
		if err := r.notify(ctx, st, n); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// settle polls (or cancels) one claimed task and records the outcome.
func (r *Runtime) settle(ctx context.Context, st store.MCPTasks, t *store.MCPTask, cancel bool) {
	cctx, stop := context.WithTimeout(ctx, r.cfg.Lease())
	snap, err := r.remote(cctx, t, cancel)
	stop()
	if ctx.Err() != nil {
		return // shutting down: the lease expires and another pass retries
	}
	now := r.clock()
	var perr *ProtocolError
	switch {
	case errors.As(err, &perr) && !cancel:
		r.logger.Error("MCP task status contract broken; the task fails", "task_id", t.ID, "server", t.Server, "err", err)
		snap = snapshot{status: store.MCPTaskFailed, errText: perr.Msg}
	case err != nil:
		attempts := t.PollErrors
		if cancel {
			attempts = t.CancelAttempts - 1
		}
		r.logger.Warn("MCP task call failed; retrying", "task_id", t.ID, "server", t.Server, "cancel", cancel, "err", err)
		f := store.MCPTaskFailure{Error: truncateChars(err.Error(), maxErrorChars)}
		if !cancel {
			f.NoticeAfter = r.cfg.TrackingDegradedAfterErrors // the thread is told once
		}
		if _, ferr := st.FailMCPTask(ctx, t.ID, r.owner, cancel, now, now.Add(r.backoff(attempts)), f); ferr != nil {
			r.logger.Error("cannot record a failed MCP task call; its lease expires for recovery", "task_id", t.ID, "err", ferr)
		}
		return
	}
	applied, err := st.FinishMCPTask(ctx, t.ID, r.owner, cancel, now, r.update(snap, now))
	switch {
	case err != nil:
		r.logger.Error("cannot record an MCP task's state; its lease expires for recovery", "task_id", t.ID, "err", err)
	case !applied:
		r.logger.Info("discarded an MCP task answer: the lease expired or the task was cancelled meanwhile", "task_id", t.ID)
	case store.MCPTaskTerminal(snap.status):
		r.logger.Info("MCP background task ended", "task_id", t.ID, "status", snap.status)
	}
}

// remote asks the server for a task's status, or cancels it.
func (r *Runtime) remote(ctx context.Context, t *store.MCPTask, cancel bool) (snapshot, error) {
	raw := t.StatusTool
	if cancel {
		raw = t.CancelTool
	}
	res, err := r.mcp.call(ctx, t.Server, raw, t.UserID, t.ThreadID, map[string]string{"task_id": t.RemoteID})
	if err != nil {
		return snapshot{}, err
	}
	sc, err := structured(res, raw)
	if err != nil {
		return snapshot{}, err
	}
	return parseStatus(sc, raw, t.RemoteID, cancel)
}

// backoff is the wait after n failures in a row: the poll interval
// doubled n times, at most max_poll_backoff_seconds.
func (r *Runtime) backoff(n int) time.Duration {
	d := r.cfg.PollInterval() << min(max(n, 0), 16)
	return min(d, r.cfg.MaxBackoff())
}

// update bounds a snapshot for the store: the error to 4000 characters,
// a result larger than max_result_bytes replaced by its first
// result_preview_max_chars characters; and schedules the next poll of an
// active task (the server's poll_after_seconds or the poll interval, at
// least input_required_poll_interval_seconds while it waits for input).
func (r *Runtime) update(s snapshot, now time.Time) store.MCPTaskUpdate {
	u := store.MCPTaskUpdate{Status: s.status, Error: truncateChars(s.errText, maxErrorChars), InputRequired: s.inputRequired}
	if len(s.result) > 0 {
		compact := compactJSON(s.result)
		if len(compact) <= r.cfg.MaxResultBytes {
			u.Result = compact
		} else {
			preview := string(compact)
			var text string
			if json.Unmarshal(compact, &text) == nil {
				preview = text
			}
			u.ResultPreview, u.ResultTruncated = truncateChars(preview, r.cfg.ResultPreviewMaxChars), true
		}
	}
	if store.MCPTaskActive(s.status) {
		wait := r.cfg.PollInterval()
		if s.pollAfter > 0 {
			wait = time.Duration(s.pollAfter * float64(time.Second))
		}
		if s.status == store.MCPTaskInputRequired {
			wait = max(wait, r.cfg.InputRequiredInterval())
		}
		u.NextPollAt = now.Add(min(wait, maxPollAfterSecond*time.Second))
	}
	return u
}

func compactJSON(b json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
