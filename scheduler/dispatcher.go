package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/vpath"
)

// Triggers of a task run.
const (
	TriggerScheduled = "scheduled"
	TriggerManual    = "manual"
)

// Outcomes of a dispatch.
const (
	OutcomeLaunched = "launched"
	OutcomeSkipped  = "skipped"
	OutcomeConflict = "conflict"
	OutcomeFailed   = "failed"
)

// Errors written on task runs, DeerFlow's texts.
const (
	errActiveRun     = "task already has an active run"
	errSkipActive    = "skipped: a previous run of this task is still active"
	errGlobalLimit   = "global concurrent-run limit reached"
	errLeaseRecovery = "interrupted: the dispatcher stopped before the run started"
	errRunMissing    = "interrupted: the run's record is gone (its thread was deleted)"
	errInterrupted   = "run was interrupted before completion"
)

// maxReconcile bounds the active task runs one reconciliation reads.
const maxReconcile = 1000

// ErrConflict is wrapped by a Launcher's error when the run cannot start
// because the thread already has an active run: a scheduled firing is
// then recorded as skipped (the overlap policy), a manual one answers
// 409.
var ErrConflict = errors.New("scheduler: the thread already has an active run")

// ErrUnavailable is wrapped by a Launcher's error when it cannot start
// runs for now (the gateway is shutting down): the firing is not lost,
// the task stays due and a later poll (or the next process) fires it.
var ErrUnavailable = errors.New("scheduler: the launcher is not available")

// LaunchRequest is a run a task starts.
type LaunchRequest struct {
	// UserID owns the task; the run is theirs.
	UserID string
	// ThreadID is the thread of the run, created when missing.
	ThreadID    string
	AssistantID string
	Prompt      string
	// Metadata goes on the run: the task and task-run ids and the
	// trigger.
	Metadata map[string]any
}

// Launched is a started run.
type Launched struct {
	// RunID names the run; its record may be written after
	// LaunchScheduled returns (the gateway's run goroutine writes it).
	RunID    string
	ThreadID string
	// Done is closed when the run has ended and its outcome is stored.
	Done <-chan struct{}
}

// Launcher starts runs the way the gateway's run route does. The gateway
// implements it.
type Launcher interface {
	LaunchScheduled(ctx context.Context, r LaunchRequest) (*Launched, error)
}

// RunReader reads a run's stored outcome (store.Store implements it).
type RunReader interface {
	GetRun(ctx context.Context, id string) (*store.Run, error)
}

// Options configure New. Tasks, Runs and Launcher are required.
type Options struct {
	Tasks    store.ScheduledTasks
	Runs     RunReader
	Launcher Launcher
	// Config is the scheduler section; its zero value is invalid, so
	// pass the loaded one (config.Default has DeerFlow's defaults).
	Config config.Scheduler
	// Owner names this dispatcher in task leases; "" means
	// host:pid:random.
	Owner string
	// Now is the clock; nil means time.Now. Tests inject a fake one.
	Now func() time.Time
	// Logger receives dispatch failures; nil discards.
	Logger *slog.Logger
}

// Outcome is the result of one dispatch, DeerFlow's dispatch result.
type Outcome struct {
	Outcome   string
	TaskRunID string
	RunID     string
	ThreadID  string
	Error     string
}

// Dispatcher fires due scheduled tasks. Start runs its poll loop; Trigger
// fires a task now; Close stops the loop and waits for the runs it
// watches.
type Dispatcher struct {
	tasks    store.ScheduledTasks
	runs     RunReader
	launcher Launcher
	cfg      config.Scheduler
	owner    string
	now      func() time.Time
	logger   *slog.Logger

	mu      sync.Mutex
	stop    context.CancelFunc // non-nil while the loop runs
	loop    chan struct{}      // closed when the loop has returned
	watches sync.WaitGroup     // goroutines waiting for launched runs
}

// New checks o and returns a Dispatcher.
func New(o Options) (*Dispatcher, error) {
	switch {
	case o.Tasks == nil:
		return nil, errors.New("scheduler: no task store")
	case o.Runs == nil:
		return nil, errors.New("scheduler: no run reader")
	case o.Launcher == nil:
		return nil, errors.New("scheduler: no launcher")
	case o.Config.PollIntervalSeconds < 1 || o.Config.LeaseSeconds < 1 || o.Config.MaxConcurrentRuns < 1:
		return nil, fmt.Errorf("scheduler: invalid config %+v", o.Config)
	}
	d := &Dispatcher{tasks: o.Tasks, runs: o.Runs, launcher: o.Launcher, cfg: o.Config, owner: o.Owner, now: o.Now, logger: o.Logger}
	if d.owner == "" {
		d.owner = store.NewOwnerID()
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.logger == nil {
		d.logger = slog.New(slog.DiscardHandler)
	}
	return d, nil
}

// Now returns the dispatcher's clock's time, in UTC at microseconds (the
// precision both stores keep).
func (d *Dispatcher) Now() time.Time { return d.now().UTC().Truncate(time.Microsecond) }

// MinOnceDelay is how far ahead a once task must be scheduled.
func (d *Dispatcher) MinOnceDelay() time.Duration {
	return time.Duration(d.cfg.MinOnceDelaySeconds) * time.Second
}

func (d *Dispatcher) leaseFor() time.Duration { return time.Duration(d.cfg.LeaseSeconds) * time.Second }

// Start reconciles the task runs left active by stopped processes and
// starts the poll loop, which runs RunOnce every poll interval until
// Close (or ctx is done). Calling it twice is an error.
func (d *Dispatcher) Start(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stop != nil {
		return errors.New("scheduler: already started")
	}
	ctx, d.stop = context.WithCancel(context.WithoutCancel(ctx))
	d.loop = make(chan struct{})
	go d.run(ctx)
	return nil
}

func (d *Dispatcher) run(ctx context.Context) {
	defer close(d.loop)
	tick := time.NewTicker(time.Duration(d.cfg.PollIntervalSeconds) * time.Second)
	defer tick.Stop()
	for {
		if err := d.RunOnce(ctx); err != nil && ctx.Err() == nil {
			// A transient store failure must not end the loop.
			d.logger.Error("scheduled task poll failed; retrying next interval", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Close stops the poll loop and waits for the goroutines watching the
// runs it started; the caller ends those runs first (the gateway cancels
// its runs on Close). It is safe to call more than once.
func (d *Dispatcher) Close() error {
	d.mu.Lock()
	stop, loop := d.stop, d.loop
	d.mu.Unlock()
	if stop != nil {
		stop()
		<-loop
	}
	d.watches.Wait()
	return nil
}

// RunOnce is one poll: it reconciles the active task runs, then claims the
// due tasks within the max_concurrent_runs budget and dispatches them.
func (d *Dispatcher) RunOnce(ctx context.Context) error {
	if err := d.reconcile(ctx); err != nil {
		d.logger.Warn("cannot reconcile scheduled task runs", "err", err)
	}
	now := d.Now()
	claimed, err := d.tasks.ClaimDueScheduledTasks(ctx, store.ClaimRequest{Now: now, Owner: d.owner,
		LeaseFor: d.leaseFor(), MaxActive: d.cfg.MaxConcurrentRuns})
	if err != nil {
		return err
	}
	for _, t := range claimed {
		d.dispatch(ctx, t, now, TriggerScheduled)
	}
	return nil
}

// Trigger runs a task now (POST .../trigger): a conflict when the task
// already has an active run or the global budget is spent; the task's
// schedule goes on. It reconciles first, so that a run left active by a
// stopped process does not block triggers while the poll loop is off
// (scheduler.enabled false).
func (d *Dispatcher) Trigger(ctx context.Context, t *store.ScheduledTask) Outcome {
	if err := d.reconcile(ctx); err != nil {
		d.logger.Warn("cannot reconcile scheduled task runs", "err", err)
	}
	return d.dispatch(ctx, t, d.Now(), TriggerManual)
}

// executionThread is the thread a run of t uses.
func executionThread(t *store.ScheduledTask) string {
	if t.ContextMode == FreshThreadPerRun || t.ThreadID == "" {
		return uuid.NewString()
	}
	return t.ThreadID
}

// dispatch starts one run of t, DeerFlow's dispatch_task. Store failures
// are logged and reported as failed outcomes.
func (d *Dispatcher) dispatch(ctx context.Context, t *store.ScheduledTask, now time.Time, trigger string) Outcome {
	// A dispatch that began is recorded to its end, even when the
	// dispatcher closes meanwhile: a claimed task left half-written
	// would wait for its lease to expire.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), completionTimeout)
	defer cancel()
	thread := executionThread(t)
	owner := d.owner
	if !vpath.ValidID(thread) {
		msg := fmt.Sprintf("invalid thread id %q", thread)
		d.finish(ctx, t, store.DispatchDone{Owner: owner, Status: failureStatus(t, trigger), NextRunAt: d.next(t, now),
			LastRunAt: now, LastThreadID: thread, LastError: msg})
		return Outcome{Outcome: OutcomeFailed, ThreadID: thread, Error: msg}
	}
	if trigger == TriggerManual {
		if o, ok := d.admitManual(ctx, t, thread, now); !ok {
			return o
		}
	}
	tr := &store.ScheduledTaskRun{ID: "task-run-" + uuid.NewString(), TaskID: t.ID, ThreadID: thread, ScheduledFor: now,
		Trigger: trigger, Status: store.TaskRunQueued, CreatedAt: now}
	if err := d.tasks.CreateScheduledTaskRun(ctx, tr); err != nil {
		if errors.Is(err, store.ErrActiveScheduledRun) {
			if trigger == TriggerManual {
				d.release(ctx, t, trigger)
				return Outcome{Outcome: OutcomeConflict, ThreadID: thread, Error: errActiveRun}
			}
			return d.skip(ctx, t, thread, now, errSkipActive)
		}
		d.logger.Error("cannot record a scheduled task run", "task_id", t.ID, "err", err)
		d.release(ctx, t, trigger)
		return Outcome{Outcome: OutcomeFailed, ThreadID: thread, Error: err.Error()}
	}
	l, err := d.launcher.LaunchScheduled(ctx, LaunchRequest{UserID: t.UserID, ThreadID: thread, AssistantID: t.AssistantID,
		Prompt: t.Prompt, Metadata: map[string]any{"scheduled_task_id": t.ID, "scheduled_task_run_id": tr.ID, "scheduled_trigger": trigger}})
	if err != nil {
		return d.launchFailed(ctx, t, tr, now, trigger, err)
	}
	if err := d.tasks.UpdateScheduledTaskRun(ctx, tr.ID, store.TaskRunUpdate{Status: store.TaskRunRunning, RunID: l.RunID,
		StartedAt: now, ProtectTerminal: true}); err != nil {
		d.logger.Error("cannot record a scheduled run's start; the run goes on", "task_id", t.ID, "run_id", l.RunID, "err", err)
	}
	d.finish(ctx, t, store.DispatchDone{Owner: owner, Status: launchStatus(t, trigger), NextRunAt: d.next(t, now),
		LastRunAt: now, LastRunID: l.RunID, LastThreadID: l.ThreadID, CountRun: true, ProtectTerminal: true})
	d.watch(t.ID, tr.ID, l)
	return Outcome{Outcome: OutcomeLaunched, TaskRunID: tr.ID, RunID: l.RunID, ThreadID: l.ThreadID}
}

// admitManual checks the global budget and leases t for a manual
// trigger; ok false returns the conflict.
func (d *Dispatcher) admitManual(ctx context.Context, t *store.ScheduledTask, thread string, now time.Time) (Outcome, bool) {
	active, err := d.tasks.CountActiveScheduledTaskRuns(ctx)
	if err != nil {
		return Outcome{Outcome: OutcomeFailed, ThreadID: thread, Error: err.Error()}, false
	}
	if active >= d.cfg.MaxConcurrentRuns {
		return Outcome{Outcome: OutcomeConflict, ThreadID: thread, Error: errGlobalLimit}, false
	}
	leased, err := d.tasks.LeaseScheduledTask(ctx, t.ID, d.owner, now, d.leaseFor())
	if err != nil {
		return Outcome{Outcome: OutcomeFailed, ThreadID: thread, Error: err.Error()}, false
	}
	if leased == nil {
		return Outcome{Outcome: OutcomeConflict, ThreadID: thread, Error: errActiveRun}, false
	}
	*t = *leased
	return Outcome{}, true
}

// launchFailed records a run that did not start: skipped for a scheduled
// firing that met a busy thread, failed otherwise.
func (d *Dispatcher) launchFailed(ctx context.Context, t *store.ScheduledTask, tr *store.ScheduledTaskRun, now time.Time, trigger string, err error) Outcome {
	if errors.Is(err, ErrUnavailable) {
		d.updateRun(ctx, tr.ID, store.TaskRunUpdate{Status: store.TaskRunInterrupted, Error: err.Error(), StartedAt: now, FinishedAt: now})
		d.release(ctx, t, trigger)
		return Outcome{Outcome: OutcomeFailed, TaskRunID: tr.ID, ThreadID: tr.ThreadID, Error: err.Error()}
	}
	conflict := errors.Is(err, ErrConflict)
	if conflict && trigger == TriggerScheduled {
		d.updateRun(ctx, tr.ID, store.TaskRunUpdate{Status: store.TaskRunSkipped, Error: err.Error(), StartedAt: now, FinishedAt: now})
		return d.finishSkip(ctx, t, tr.ID, tr.ThreadID, now, err.Error())
	}
	d.updateRun(ctx, tr.ID, store.TaskRunUpdate{Status: store.TaskRunFailed, Error: err.Error(), StartedAt: now, FinishedAt: now})
	d.finish(ctx, t, store.DispatchDone{Owner: d.owner, Status: failureStatus(t, trigger), NextRunAt: d.next(t, now),
		LastRunAt: now, LastThreadID: tr.ThreadID, LastError: err.Error()})
	o := Outcome{Outcome: OutcomeFailed, TaskRunID: tr.ID, ThreadID: tr.ThreadID, Error: err.Error()}
	if conflict {
		o.Outcome = OutcomeConflict
	}
	return o
}

// skip records a scheduled firing lost to a run still active: a skipped
// tombstone (outside the one-active-run rule) and the task moved on.
func (d *Dispatcher) skip(ctx context.Context, t *store.ScheduledTask, thread string, now time.Time, msg string) Outcome {
	tr := &store.ScheduledTaskRun{ID: "task-run-" + uuid.NewString(), TaskID: t.ID, ThreadID: thread, ScheduledFor: now,
		Trigger: TriggerScheduled, Status: store.TaskRunSkipped, Error: msg, StartedAt: now, FinishedAt: now, CreatedAt: now}
	if err := d.tasks.CreateScheduledTaskRun(ctx, tr); err != nil {
		d.logger.Error("cannot record a skipped scheduled run", "task_id", t.ID, "err", err)
	}
	d.prune(ctx, t.ID)
	return d.finishSkip(ctx, t, tr.ID, thread, now, msg)
}

func (d *Dispatcher) finishSkip(ctx context.Context, t *store.ScheduledTask, taskRunID, thread string, now time.Time, msg string) Outcome {
	status, lastErr := store.TaskEnabled, ""
	if t.ScheduleType == TypeOnce {
		// The one firing is lost; "completed" would claim a run that
		// never happened.
		status, lastErr = store.TaskFailed, msg
	}
	d.finish(ctx, t, store.DispatchDone{Owner: d.owner, Status: status, NextRunAt: d.next(t, now), LastRunAt: t.LastRunAt,
		LastRunID: t.LastRunID, LastThreadID: t.LastThreadID, LastError: lastErr})
	return Outcome{Outcome: OutcomeSkipped, TaskRunID: taskRunID, ThreadID: thread, Error: msg}
}

// release gives up t's lease, leaving the task as it was before the
// dispatch.
func (d *Dispatcher) release(ctx context.Context, t *store.ScheduledTask, trigger string) {
	d.finish(ctx, t, store.DispatchDone{Owner: d.owner, Status: restStatus(t, trigger), NextRunAt: t.NextRunAt, LastRunAt: t.LastRunAt,
		LastRunID: t.LastRunID, LastThreadID: t.LastThreadID, LastError: t.LastError})
}

// restStatus is the status of a task whose dispatch did not fire it: a
// manual trigger's lease left the status alone; a claim set it to
// running from enabled.
func restStatus(t *store.ScheduledTask, trigger string) string {
	if trigger == TriggerManual {
		return t.Status
	}
	return store.TaskEnabled
}

func (d *Dispatcher) finish(ctx context.Context, t *store.ScheduledTask, done store.DispatchDone) {
	ok, err := d.tasks.FinishScheduledDispatch(ctx, t.ID, done)
	switch {
	case err != nil:
		d.logger.Error("cannot record a scheduled dispatch", "task_id", t.ID, "err", err)
	case !ok:
		d.logger.Warn("scheduled dispatch not recorded: the task's lease was taken or the task deleted", "task_id", t.ID)
	}
}

func (d *Dispatcher) updateRun(ctx context.Context, id string, u store.TaskRunUpdate) {
	if err := d.tasks.UpdateScheduledTaskRun(ctx, id, u); err != nil {
		d.logger.Error("cannot update a scheduled task run", "task_run_id", id, "err", err)
	}
}

// next is t's next firing after now (zero: none).
func (d *Dispatcher) next(t *store.ScheduledTask, now time.Time) time.Time {
	next, ok, err := NextRun(t.ScheduleType, t.ScheduleSpec, t.Timezone, now)
	if err != nil {
		d.logger.Error("scheduled task has an invalid schedule", "task_id", t.ID, "err", err)
	}
	if !ok {
		return time.Time{}
	}
	return next
}

// failureStatus is DeerFlow's task status after a run that did not
// start: a manual trigger keeps the task's future, a once task has no
// other firing.
func failureStatus(t *store.ScheduledTask, trigger string) string {
	if trigger == TriggerManual {
		return restStatus(t, trigger)
	}
	if t.ScheduleType == TypeOnce {
		return store.TaskFailed
	}
	return store.TaskEnabled
}

// launchStatus is the task status once its run started: a once task is
// running until the run ends; a manual trigger keeps a pause.
func launchStatus(t *store.ScheduledTask, trigger string) string {
	switch {
	case t.ScheduleType == TypeOnce:
		return store.TaskRunning
	case trigger == TriggerManual && t.Status == store.TaskPaused:
		return store.TaskPaused
	}
	return store.TaskEnabled
}
