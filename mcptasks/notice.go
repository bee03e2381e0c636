package mcptasks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/antlerhq/antler/store"
)

// maxNoticeAttempts is how many times a notice is tried before it is
// given up (DeerFlow's notification attempts).
const maxNoticeAttempts = 5

// ErrNoticeRefused is wrapped by a Notifier's error that retrying cannot
// mend (the thread is gone): the notice is given up at once.
var ErrNoticeRefused = errors.New("mcptasks: the notice cannot be delivered")

// Notifier tells a task's thread that the task ended or asks a question
// (DeerFlow's notification run): the gateway starts a run on the thread
// whose hidden input is the task's state. An error is retried with the
// poll backoff, at most 5 times; one wrapping ErrNoticeRefused is not.
type Notifier interface {
	NotifyMCPTask(ctx context.Context, t *store.MCPTask) error
}

// AttachNotifier makes the runtime deliver notices through n (the
// gateway, once it is built). Until one is attached, notices wait in the
// store for a runtime that has one.
func (r *Runtime) AttachNotifier(n Notifier) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notifier = n
}

func (r *Runtime) attachedNotifier() Notifier {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notifier
}

// notify claims the due notices and delivers them, at most
// max_concurrent_polls at once.
func (r *Runtime) notify(ctx context.Context, st store.MCPTasks, n Notifier) error {
	claimed, err := st.ClaimMCPTasks(ctx, store.MCPTaskClaim{Notify: true, Owner: r.owner, Now: r.clock(),
		Lease: r.cfg.Lease(), Limit: r.cfg.MaxConcurrentPolls})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, t := range claimed {
		wg.Go(func() { r.deliver(ctx, st, n, t) })
	}
	wg.Wait()
	return nil
}

// deliver tries one notice and records the outcome: delivered, due
// again after the poll backoff, or given up.
func (r *Runtime) deliver(ctx context.Context, st store.MCPTasks, n Notifier, t *store.MCPTask) {
	cctx, stop := context.WithTimeout(ctx, r.cfg.Lease())
	err := n.NotifyMCPTask(cctx, t)
	stop()
	if ctx.Err() != nil {
		return // shutting down: the lease expires and another pass retries
	}
	now := r.clock()
	var next time.Time
	var errText string
	switch {
	case err == nil:
		r.logger.Info("MCP background task notice delivered", "task_id", t.ID, "status", t.Status)
	case errors.Is(err, ErrNoticeRefused) || t.NotifyAttempts+1 >= maxNoticeAttempts:
		r.logger.Error("MCP background task notice given up", "task_id", t.ID, "attempts", t.NotifyAttempts+1, "err", err)
		errText = fmt.Sprintf("notice given up after %d attempts: %v", t.NotifyAttempts+1, err)
	default:
		r.logger.Warn("MCP background task notice failed; retrying", "task_id", t.ID, "err", err)
		next, errText = now.Add(r.backoff(t.NotifyAttempts)), err.Error()
	}
	if _, err := st.SettleMCPTaskNotice(ctx, t.ID, r.owner, now, next, truncateChars(errText, maxErrorChars)); err != nil {
		r.logger.Error("cannot record an MCP task notice; its lease expires for recovery", "task_id", t.ID, "err", err)
	}
}
