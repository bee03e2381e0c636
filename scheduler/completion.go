package scheduler

import (
	"context"
	"errors"
	"time"

	"github.com/antlerhq/antler/store"
)

// completionTimeout bounds the writes that record a run's outcome.
const completionTimeout = 30 * time.Second

// watch waits (on its own goroutine) for a launched run to end and
// records its outcome.
func (d *Dispatcher) watch(taskID, taskRunID string, l *Launched) {
	d.watches.Add(1)
	go func() {
		defer d.watches.Done()
		<-l.Done
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		run, err := d.runs.GetRun(ctx, l.RunID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			// The next reconciliation records it.
			d.logger.Error("cannot read a scheduled run's outcome", "run_id", l.RunID, "err", err)
			return
		}
		d.complete(ctx, taskID, taskRunID, l.RunID, run)
	}()
}

// runOutcome maps a stored run's status to a task run's terminal status
// and error; ok is false while the run is still going.
func runOutcome(r *store.Run) (status, errText string, ok bool) {
	if r == nil {
		return store.TaskRunInterrupted, errRunMissing, true
	}
	switch r.Status {
	case store.RunSuccess:
		return store.TaskRunSuccess, "", true
	case store.RunInterrupted, store.RunCancelled:
		// An interrupt (a cancel, a takeover) is not a failure.
		if r.Error != "" {
			return store.TaskRunInterrupted, r.Error, true
		}
		return store.TaskRunInterrupted, errInterrupted, true
	case store.RunError:
		return store.TaskRunFailed, r.Error, true
	}
	return "", "", false
}

// complete records the outcome of a task's run (r nil: the run's record
// is gone), DeerFlow's handle_run_completion: the task run's status, and
// for a once task its final status.
func (d *Dispatcher) complete(ctx context.Context, taskID, taskRunID, runID string, r *store.Run) {
	status, errText, ok := runOutcome(r)
	if !ok {
		return
	}
	d.updateRun(ctx, taskRunID, store.TaskRunUpdate{Status: status, RunID: runID, Error: errText, FinishedAt: d.Now()})
	d.prune(ctx, taskID)
	t, err := d.tasks.GetScheduledTask(ctx, taskID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			d.logger.Error("cannot read a scheduled task", "task_id", taskID, "err", err)
		}
		return
	}
	edit := store.TaskEdit{LastError: &errText}
	if t.ScheduleType == TypeOnce {
		// The one firing is consumed whatever the outcome.
		final := onceFinal(status)
		edit.Status = &final
	}
	if _, err := d.tasks.EditScheduledTask(ctx, taskID, edit); err != nil && !errors.Is(err, store.ErrNotFound) {
		d.logger.Error("cannot record a scheduled task's outcome", "task_id", taskID, "err", err)
	}
}

// reconcile finishes the task runs whose run ended without its outcome
// being recorded here: the process that watched it stopped (its runs
// were then failed by the store's recovery: SQLite's owner locks,
// Postgres's run leases) or another replica's watcher failed. A task run
// that never got its run is interrupted once its task's lease has
// expired. A run whose record is missing is taken as gone (its thread
// deleted) only once its task run is older than the lease too: the
// gateway's run writes its record after LaunchScheduled returns. Once
// tasks left running without an active run are cancelled.
func (d *Dispatcher) reconcile(ctx context.Context) error {
	active, err := d.tasks.ActiveScheduledTaskRuns(ctx, maxReconcile)
	if err != nil {
		return err
	}
	now := d.Now()
	busy := map[string]bool{}
	for _, tr := range active {
		busy[tr.TaskID] = true
		starting := now.Sub(tr.CreatedAt) < d.leaseFor()
		if tr.RunID != "" {
			r, err := d.runs.GetRun(ctx, tr.RunID)
			switch {
			case errors.Is(err, store.ErrNotFound) && starting:
				// The launcher may return before its run writes its
				// record (the gateway's run goroutine writes it): a
				// run that recent is starting, not gone.
				continue
			case errors.Is(err, store.ErrNotFound):
				r = nil
			case err != nil:
				return err
			}
			if _, _, ok := runOutcome(r); ok {
				d.complete(ctx, tr.TaskID, tr.ID, tr.RunID, r)
				delete(busy, tr.TaskID)
			}
			continue
		}
		if starting {
			continue // its dispatch may still be starting it
		}
		t, err := d.tasks.GetScheduledTask(ctx, tr.TaskID)
		if err == nil && t.LeaseOwner != "" && !t.LeaseExpiresAt.Before(now) {
			continue
		}
		d.updateRun(ctx, tr.ID, store.TaskRunUpdate{Status: store.TaskRunInterrupted, Error: errLeaseRecovery, FinishedAt: now})
		delete(busy, tr.TaskID)
	}
	return d.cancelStuckOnce(ctx, busy)
}

// cancelStuckOnce finishes the once tasks left running, without a live
// lease, by a process that stopped between starting the run and
// recording its outcome: the task takes the outcome of its latest run,
// cancelled when it has none. A task whose latest run is active is left
// alone (checked per task, after listing, so that a dispatch finishing
// meanwhile is seen).
func (d *Dispatcher) cancelStuckOnce(ctx context.Context, busy map[string]bool) error {
	running, err := d.tasks.ListScheduledTasks(ctx, store.TaskQuery{Status: store.TaskRunning, Limit: maxReconcile})
	if err != nil {
		return err
	}
	for _, t := range running {
		if t.ScheduleType != TypeOnce || busy[t.ID] || t.LeaseOwner != "" {
			// A leased task is being dispatched, or was claimed by a
			// dispatcher that died: the claim takes it again.
			continue
		}
		latest, err := d.tasks.ListScheduledTaskRuns(ctx, t.ID, 1, 0)
		if err != nil {
			return err
		}
		final, msg := store.TaskCancelled, errLeaseRecovery
		if len(latest) == 1 {
			tr := latest[0]
			if !store.TerminalTaskRun(tr.Status) {
				continue
			}
			final, msg = onceFinal(tr.Status), tr.Error
		}
		if _, err := d.tasks.EditScheduledTask(ctx, t.ID, store.TaskEdit{Status: &final, LastError: &msg}); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}

// onceFinal is a once task's status after its run ended with the task
// run status status.
func onceFinal(status string) string {
	switch status {
	case store.TaskRunSuccess:
		return store.TaskCompleted
	case store.TaskRunInterrupted:
		return store.TaskCancelled
	}
	return store.TaskFailed
}

// KeepTaskRuns is how many runs of a task are kept (the most GET .../runs
// pages through, DeerFlow's largest limit): older finished ones are
// deleted as new ones end, so that a task firing every minute does not
// grow the database without bound.
const KeepTaskRuns = 200

func (d *Dispatcher) prune(ctx context.Context, taskID string) {
	if _, err := d.tasks.PruneScheduledTaskRuns(ctx, taskID, KeepTaskRuns); err != nil {
		d.logger.Warn("cannot prune a scheduled task's runs", "task_id", taskID, "err", err)
	}
}
