package scheduler_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/scheduler"
	"github.com/antlerhq/antler/store"
)

// TestDispatcher_cronFiring: a due cron task is claimed, its run started
// with the task's prompt, user and metadata on a new thread, its outcome
// recorded, and the task re-armed for its next firing.
func TestDispatcher_cronFiring(t *testing.T) {
	st := openSQLite(t, t.TempDir())
	c := &clock{now: t0}
	l := &launcher{st: st, end: succeed}
	d := newDispatcher(t, st, l, c, 3, "A")
	create(t, st, cronTask("daily", "0 12 * * *", t0), cronTask("later", "0 13 * * *", t0.Add(25*time.Hour)))

	runOnce(t, d)
	got := l.all()
	if len(got) != 1 {
		t.Fatalf("launched %d runs, want 1", len(got))
	}
	req := got[0].req
	if req.UserID != "alice" || req.Prompt != "prompt of daily" || req.AssistantID != "lead_agent" || req.ThreadID == "" ||
		req.Metadata["scheduled_task_id"] != "daily" || req.Metadata["scheduled_trigger"] != "scheduled" {
		t.Errorf("launch = %+v", req)
	}
	task := getTask(t, st, "daily")
	if task.Status != store.TaskEnabled || !task.NextRunAt.Equal(t0.Add(24*time.Hour)) || task.RunCount != 1 ||
		task.LastRunID != "run-1" || task.LastThreadID != req.ThreadID || !task.LastRunAt.Equal(t0) || task.LeaseOwner != "" {
		t.Errorf("task after firing = %+v", task)
	}
	runs := runsOf(t, st, "daily")
	if len(runs) != 1 {
		t.Fatalf("task runs = %d", len(runs))
	}
	want := &store.ScheduledTaskRun{ID: runs[0].ID, TaskID: "daily", ThreadID: req.ThreadID, RunID: "run-1", ScheduledFor: t0,
		Trigger: "scheduled", Status: store.TaskRunSuccess, StartedAt: t0, FinishedAt: t0, CreatedAt: t0}
	if diff := cmp.Diff(want, runs[0]); diff != "" {
		t.Errorf("task run (-want +got):\n%s", diff)
	}
	if req.Metadata["scheduled_task_run_id"] != runs[0].ID {
		t.Errorf("metadata task run id = %v, want %s", req.Metadata["scheduled_task_run_id"], runs[0].ID)
	}
	// Not due again before its next firing.
	c.Set(t0.Add(23 * time.Hour))
	runOnce(t, d)
	if n := len(l.all()); n != 1 {
		t.Errorf("launched %d runs before the next firing", n)
	}
}

// TestDispatcher_reuseThread: reuse_thread runs on the task's thread.
func TestDispatcher_reuseThread(t *testing.T) {
	st := openSQLite(t, t.TempDir())
	l := &launcher{st: st, end: succeed}
	d := newDispatcher(t, st, l, &clock{now: t0}, 3, "A")
	task := cronTask("a", "* * * * *", t0)
	task.ContextMode, task.ThreadID = scheduler.ReuseThread, "thread-1"
	create(t, st, task)
	runOnce(t, d)
	if got := l.all(); len(got) != 1 || got[0].req.ThreadID != "thread-1" {
		t.Fatalf("launches = %+v", got)
	}
}

// TestDispatcher_onceOutcomes: a once task's final status follows its
// run's outcome, and it never fires again.
func TestDispatcher_onceOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name, runStatus, errText string
		wantTask, wantRun        string
		wantErr                  string
	}{
		{"success", store.RunSuccess, "", store.TaskCompleted, store.TaskRunSuccess, ""},
		{"error", store.RunError, "model failed", store.TaskFailed, store.TaskRunFailed, "model failed"},
		{"cancelled", store.RunCancelled, "", store.TaskCancelled, store.TaskRunInterrupted, "run was interrupted before completion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openSQLite(t, t.TempDir())
			c := &clock{now: t0}
			l := &launcher{st: st, end: func(scheduler.LaunchRequest) (string, string) { return tc.runStatus, tc.errText }}
			d := newDispatcher(t, st, l, c, 3, "A")
			create(t, st, onceTask("once", t0))
			runOnce(t, d)
			task := getTask(t, st, "once")
			if task.Status != tc.wantTask || task.LastError != tc.wantErr || !task.NextRunAt.IsZero() || task.RunCount != 1 {
				t.Errorf("task = %+v", task)
			}
			runs := runsOf(t, st, "once")
			if len(runs) != 1 || runs[0].Status != tc.wantRun || runs[0].Error != tc.wantErr {
				t.Errorf("runs = %+v", runs)
			}
			c.Set(t0.Add(time.Hour))
			runOnce(t, d)
			if n := len(l.all()); n != 1 {
				t.Errorf("a once task fired %d times", n)
			}
		})
	}
}

// TestDispatcher_overlapSkips: a firing while the previous run is still
// active is recorded as skipped, and the schedule moves on.
func TestDispatcher_overlapSkips(t *testing.T) {
	st := openSQLite(t, t.TempDir())
	c := &clock{now: t0}
	l := &launcher{st: st} // runs are held
	d := newDispatcher(t, st, l, c, 3, "A")
	create(t, st, cronTask("a", "* * * * *", t0))
	if err := d.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.Set(t0.Add(time.Minute))
	if err := d.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(l.all()); n != 1 {
		t.Fatalf("launched %d runs while the first is active", n)
	}
	runs := runsOf(t, st, "a")
	if len(runs) != 2 || runs[0].Status != store.TaskRunSkipped || runs[0].Error != "skipped: a previous run of this task is still active" ||
		runs[1].Status != store.TaskRunRunning {
		t.Fatalf("runs = %+v %+v", runs[0], runs[1])
	}
	task := getTask(t, st, "a")
	if task.Status != store.TaskEnabled || !task.NextRunAt.Equal(t0.Add(2*time.Minute)) || task.RunCount != 1 {
		t.Errorf("task = %+v", task)
	}
	l.finish(t.Context(), l.all()[0], store.RunSuccess, "")
	d.WaitWatches()
	if runs := runsOf(t, st, "a"); runs[1].Status != store.TaskRunSuccess {
		t.Errorf("first run = %+v", runs[1])
	}
}

// TestDispatcher_maxConcurrentRuns: no more runs are active at once than
// max_concurrent_runs; the rest wait for the next poll.
func TestDispatcher_maxConcurrentRuns(t *testing.T) {
	st := openSQLite(t, t.TempDir())
	c := &clock{now: t0}
	l := &launcher{st: st}
	d := newDispatcher(t, st, l, c, 2, "A")
	for i := range 5 {
		create(t, st, cronTask(fmt.Sprintf("t%d", i), "0 * * * *", t0))
	}
	for range 3 {
		if err := d.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(l.all()); n != 2 {
		t.Fatalf("launched %d runs with max_concurrent_runs 2", n)
	}
	for _, x := range l.all() {
		l.finish(t.Context(), x, store.RunSuccess, "")
	}
	d.WaitWatches()
	if err := d.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(l.all()); n != 4 {
		t.Fatalf("launched %d runs after two ended, want 4", n)
	}
	for _, x := range l.all()[2:] {
		l.finish(t.Context(), x, store.RunSuccess, "")
	}
	d.WaitWatches()
}

// TestDispatcher_launchFailures: a busy thread skips a scheduled firing;
// another failure fails the task run and, for a once task, the task.
func TestDispatcher_launchFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		task     *store.ScheduledTask
		wantRun  string
		wantTask string
	}{
		{"busy thread skips", fmt.Errorf("thread busy: %w", scheduler.ErrConflict), cronTask("a", "* * * * *", t0), store.TaskRunSkipped, store.TaskEnabled},
		{"failure keeps a cron task", errors.New("no model"), cronTask("a", "* * * * *", t0), store.TaskRunFailed, store.TaskEnabled},
		{"failure ends a once task", errors.New("no model"), onceTask("a", t0), store.TaskRunFailed, store.TaskFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openSQLite(t, t.TempDir())
			d := newDispatcher(t, st, &launcher{st: st, err: tc.err}, &clock{now: t0}, 3, "A")
			create(t, st, tc.task)
			runOnce(t, d)
			runs := runsOf(t, st, "a")
			if len(runs) != 1 || runs[0].Status != tc.wantRun || runs[0].Error != tc.err.Error() {
				t.Fatalf("runs = %+v", runs)
			}
			task := getTask(t, st, "a")
			if task.Status != tc.wantTask || task.RunCount != 0 || task.LeaseOwner != "" {
				t.Errorf("task = %+v", task)
			}
			if tc.wantRun == store.TaskRunFailed && task.LastError != tc.err.Error() {
				t.Errorf("last_error = %q", task.LastError)
			}
		})
	}
}

// TestDispatcher_trigger: a manual trigger runs a paused task now and
// keeps it paused; it conflicts with an active run and beyond the budget.
func TestDispatcher_trigger(t *testing.T) {
	st := openSQLite(t, t.TempDir())
	c := &clock{now: t0}
	l := &launcher{st: st}
	d := newDispatcher(t, st, l, c, 2, "A")
	paused := cronTask("p", "0 9 * * *", t0.Add(time.Hour))
	paused.Status = store.TaskPaused
	create(t, st, paused, cronTask("b", "0 9 * * *", t0.Add(time.Hour)), cronTask("c", "0 9 * * *", t0.Add(time.Hour)))

	o := d.Trigger(t.Context(), getTask(t, st, "p"))
	if o.Outcome != scheduler.OutcomeLaunched || o.RunID != "run-1" {
		t.Fatalf("trigger = %+v", o)
	}
	if task := getTask(t, st, "p"); task.Status != store.TaskPaused || task.RunCount != 1 || task.LeaseOwner != "" {
		t.Errorf("paused task after trigger = %+v", task)
	}
	if runs := runsOf(t, st, "p"); len(runs) != 1 || runs[0].Trigger != "manual" {
		t.Errorf("runs = %+v", runs)
	}
	if o := d.Trigger(t.Context(), getTask(t, st, "p")); o.Outcome != scheduler.OutcomeConflict || o.Error != "task already has an active run" {
		t.Errorf("second trigger = %+v", o)
	}
	if task := getTask(t, st, "p"); task.LeaseOwner != "" || task.Status != store.TaskPaused {
		t.Errorf("a conflicting trigger left the task %+v", task)
	}
	if o := d.Trigger(t.Context(), getTask(t, st, "b")); o.Outcome != scheduler.OutcomeLaunched {
		t.Fatalf("trigger b = %+v", o)
	}
	if o := d.Trigger(t.Context(), getTask(t, st, "c")); o.Outcome != scheduler.OutcomeConflict || o.Error != "global concurrent-run limit reached" {
		t.Errorf("trigger beyond the budget = %+v", o)
	}
	for _, x := range l.all() {
		l.finish(t.Context(), x, store.RunSuccess, "")
	}
	d.WaitWatches()
}

// TestDispatcher_reconcile: runs whose watcher stopped with its process
// are finished from the stored run's outcome; a task run that never got
// its run is interrupted once its task's lease is gone; a once task left
// running takes its last run's outcome.
func TestDispatcher_reconcile(t *testing.T) {
	dir := t.TempDir()
	st := openSQLite(t, dir)
	c := &clock{now: t0}
	l := &launcher{st: st}
	first := newDispatcher(t, st, l, c, 5, "A")
	create(t, st, onceTask("once", t0), cronTask("cron", "0 * * * *", t0))
	if err := first.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(l.all()); n != 2 {
		t.Fatalf("launched %d", n)
	}
	// The runs end while nothing watches them (the process died): the
	// store's recovery records them as failed.
	for _, x := range l.all() {
		if err := st.UpdateRun(t.Context(), x.run, store.RunUpdate{Status: store.RunError, Error: "process stopped"}); err != nil {
			t.Fatal(err)
		}
	}
	// A task run whose dispatcher died before starting the run.
	create(t, st, cronTask("stuck", "0 * * * *", t0.Add(time.Hour)))
	if err := st.CreateScheduledTaskRun(t.Context(), &store.ScheduledTaskRun{ID: "tr-stuck", TaskID: "stuck", ThreadID: "th",
		ScheduledFor: t0, Trigger: "scheduled", Status: store.TaskRunQueued, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}

	c.Set(t0.Add(10 * time.Minute))
	second := newDispatcher(t, st, &launcher{st: st}, c, 5, "B")
	runOnce(t, second)
	if task := getTask(t, st, "once"); task.Status != store.TaskFailed || task.LastError != "process stopped" {
		t.Errorf("once task = %+v", task)
	}
	if runs := runsOf(t, st, "cron"); runs[0].Status != store.TaskRunFailed || runs[0].Error != "process stopped" {
		t.Errorf("cron run = %+v", runs[0])
	}
	if runs := runsOf(t, st, "stuck"); runs[0].Status != store.TaskRunInterrupted {
		t.Errorf("stuck run = %+v", runs[0])
	}
	if n, _ := st.CountActiveScheduledTaskRuns(t.Context()); n != 0 {
		t.Errorf("%d task runs still active", n)
	}
	for _, x := range l.all() {
		close(x.done)
	}
}

// TestDispatcher_startAndClose: Start runs a poll at once, and Close
// stops the loop and returns.
func TestDispatcher_startAndClose(t *testing.T) {
	st := openSQLite(t, t.TempDir())
	launched := make(chan struct{}, 1)
	l := &launcher{st: st, end: func(scheduler.LaunchRequest) (string, string) {
		launched <- struct{}{}
		return store.RunSuccess, ""
	}}
	d := newDispatcher(t, st, l, &clock{now: t0}, 3, "A")
	create(t, st, cronTask("a", "0 * * * *", t0))
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := d.Start(t.Context()); err == nil {
		t.Error("a second Start succeeded")
	}
	<-launched
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDispatcher_launcherUnavailable: a launcher that cannot start runs
// for now loses no firing: the task stays due for the next poll.
func TestDispatcher_launcherUnavailable(t *testing.T) {
	st := openSQLite(t, t.TempDir())
	l := &launcher{st: st, err: fmt.Errorf("shutting down: %w", scheduler.ErrUnavailable)}
	d := newDispatcher(t, st, l, &clock{now: t0}, 3, "A")
	create(t, st, onceTask("a", t0))
	runOnce(t, d)
	task := getTask(t, st, "a")
	if task.Status != store.TaskEnabled || !task.NextRunAt.Equal(t0) || task.LeaseOwner != "" || task.RunCount != 0 {
		t.Fatalf("task = %+v", task)
	}
	if runs := runsOf(t, st, "a"); len(runs) != 1 || runs[0].Status != store.TaskRunInterrupted {
		t.Fatalf("runs = %+v", runs)
	}
	l.err = nil
	l.end = succeed
	runOnce(t, d)
	if task := getTask(t, st, "a"); task.Status != store.TaskCompleted {
		t.Fatalf("task after the retry = %+v", task)
	}
}

// TestDispatcher_triggerReconciles: a run left active by a stopped
// process does not block a manual trigger when no poll loop runs.
func TestDispatcher_triggerReconciles(t *testing.T) {
	st := openSQLite(t, t.TempDir())
	c := &clock{now: t0}
	l := &launcher{st: st}
	d := newDispatcher(t, st, l, c, 3, "A")
	create(t, st, cronTask("a", "0 9 * * *", t0.Add(time.Hour)))
	if o := d.Trigger(t.Context(), getTask(t, st, "a")); o.Outcome != scheduler.OutcomeLaunched {
		t.Fatalf("trigger = %+v", o)
	}
	// The process stops: its run is failed by the store's recovery, and
	// nothing recorded the outcome.
	if err := st.UpdateRun(t.Context(), l.all()[0].run, store.RunUpdate{Status: store.RunError, Error: "process stopped"}); err != nil {
		t.Fatal(err)
	}
	c.Set(t0.Add(time.Minute))
	other := newDispatcher(t, st, &launcher{st: st, end: succeed, prefix: "b-"}, c, 3, "B")
	if o := other.Trigger(t.Context(), getTask(t, st, "a")); o.Outcome != scheduler.OutcomeLaunched {
		t.Fatalf("trigger after the stop = %+v", o)
	}
	other.WaitWatches()
	if runs := runsOf(t, st, "a"); len(runs) != 2 || runs[1].Status != store.TaskRunFailed || runs[0].Status != store.TaskRunSuccess {
		t.Errorf("runs = %+v %+v", runs[0], runs[1])
	}
	close(l.all()[0].done)
}

// TestDispatcher_runRecordWrittenLate: the gateway's run writes its
// record after LaunchScheduled returns. A trigger or a poll in between
// sees a run starting, not one gone: a second trigger conflicts and the
// task run stays running until the run's outcome. A record still missing
// after the lease is a run gone (its thread deleted).
func TestDispatcher_runRecordWrittenLate(t *testing.T) {
	st := openSQLite(t, t.TempDir())
	c := &clock{now: t0}
	l := &launcher{st: st, late: true}
	d := newDispatcher(t, st, l, c, 5, "A")
	t.Cleanup(func() { // before d.Close, which waits for the runs' ends
		for _, x := range l.all() {
			select {
			case <-x.done:
			default:
				close(x.done)
			}
		}
	})
	create(t, st, onceTask("once", t0.Add(time.Hour)), cronTask("cron", "0 * * * *", t0.Add(time.Hour)))
	for _, id := range []string{"once", "cron"} {
		if o := d.Trigger(t.Context(), getTask(t, st, id)); o.Outcome != scheduler.OutcomeLaunched {
			t.Fatalf("trigger %s = %+v", id, o)
		}
	}
	if o := d.Trigger(t.Context(), getTask(t, st, "once")); o.Outcome != scheduler.OutcomeConflict {
		t.Errorf("second trigger before the run's record = %+v, want a conflict", o)
	}
	if err := d.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"once", "cron"} {
		if runs := runsOf(t, st, id); len(runs) != 1 || runs[0].Status != store.TaskRunRunning {
			t.Fatalf("runs of %s before the run's record = %+v", id, runs)
		}
	}
	if task := getTask(t, st, "once"); task.Status != store.TaskRunning {
		t.Errorf("once task before the run's record = %+v", task)
	}

	launches := l.all()
	if err := l.writeRecord(t.Context(), launches[0]); err != nil {
		t.Fatal(err)
	}
	l.finish(t.Context(), launches[0], store.RunSuccess, "")
	c.Set(t0.Add(time.Duration(config.Default().Scheduler.LeaseSeconds+1) * time.Second))
	if err := d.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if runs := runsOf(t, st, "once"); runs[0].Status != store.TaskRunSuccess {
		t.Errorf("once run = %+v", runs[0])
	}
	if task := getTask(t, st, "once"); task.Status != store.TaskCompleted {
		t.Errorf("once task = %+v", task)
	}
	if runs := runsOf(t, st, "cron"); runs[0].Status != store.TaskRunInterrupted || !strings.Contains(runs[0].Error, "record is gone") {
		t.Errorf("cron run without a record after the lease = %+v", runs[0])
	}
}
