package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/scheduler"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
)

// testStore is what the dispatcher's tests need of a store.
type testStore interface {
	store.Store
	store.ScheduledTasks
}

var t0 = time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)

// clock is a fake clock the tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// launch is one run the fake launcher started.
type launch struct {
	req  scheduler.LaunchRequest
	run  string
	done chan struct{}
}

// launcher is a fake Launcher: it records each run in the store as the
// gateway does, and ends it with the status end returns (held: "" keeps
// it running until finish).
type launcher struct {
	st  store.Store
	end func(req scheduler.LaunchRequest) (status, errText string)
	err error // returned instead of starting a run
	// prefix makes run ids unique among launchers on one store.
	prefix string
	// late leaves the run's record to the test (writeRecord), as the
	// gateway's run goroutine writes it after LaunchScheduled returns.
	late bool

	mu       sync.Mutex
	launches []*launch
}

func (l *launcher) LaunchScheduled(ctx context.Context, r scheduler.LaunchRequest) (*scheduler.Launched, error) {
	if l.err != nil {
		return nil, l.err
	}
	if _, err := l.st.GetThread(ctx, r.ThreadID); errors.Is(err, store.ErrNotFound) {
		if err := l.st.CreateThread(ctx, &store.Thread{ID: r.ThreadID, UserID: r.UserID}); err != nil && !errors.Is(err, store.ErrExists) {
			return nil, err
		}
	}
	l.mu.Lock()
	id := fmt.Sprintf("%srun-%d", l.prefix, len(l.launches)+1)
	x := &launch{req: r, run: id, done: make(chan struct{})}
	l.launches = append(l.launches, x)
	l.mu.Unlock()
	if l.late {
		return &scheduler.Launched{RunID: id, ThreadID: r.ThreadID, Done: x.done}, nil
	}
	if err := l.writeRecord(ctx, x); err != nil {
		return nil, err
	}
	if l.end != nil {
		if status, errText := l.end(r); status != "" {
			l.finish(ctx, x, status, errText)
		}
	}
	return &scheduler.Launched{RunID: id, ThreadID: r.ThreadID, Done: x.done}, nil
}

// writeRecord writes the running record of x.
func (l *launcher) writeRecord(ctx context.Context, x *launch) error {
	return l.st.CreateRun(ctx, &store.Run{ID: x.run, ThreadID: x.req.ThreadID, UserID: x.req.UserID, Status: store.RunRunning,
		Metadata: x.req.Metadata})
}

func (l *launcher) finish(ctx context.Context, x *launch, status, errText string) {
	if err := l.st.UpdateRun(context.WithoutCancel(ctx), x.run, store.RunUpdate{Status: status, Error: errText}); err != nil {
		panic(err)
	}
	close(x.done)
}

func (l *launcher) all() []*launch {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*launch(nil), l.launches...)
}

func succeed(scheduler.LaunchRequest) (string, string) { return store.RunSuccess, "" }

func openSQLite(t *testing.T, dir string) testStore {
	t.Helper()
	s, err := sqlite.OpenDir(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func schedulerConfig(maxRuns int) config.Scheduler {
	c := config.Default().Scheduler
	c.MaxConcurrentRuns = maxRuns
	return c
}

func newDispatcher(t *testing.T, st testStore, l scheduler.Launcher, c *clock, maxRuns int, owner string) *scheduler.Dispatcher {
	t.Helper()
	d, err := scheduler.New(scheduler.Options{Tasks: st, Runs: st, Launcher: l, Config: schedulerConfig(maxRuns), Owner: owner, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func cronTask(id, expr string, next time.Time) *store.ScheduledTask {
	return &store.ScheduledTask{ID: id, UserID: "alice", ContextMode: scheduler.FreshThreadPerRun, AssistantID: "lead_agent",
		Title: id, Prompt: "prompt of " + id, ScheduleType: scheduler.TypeCron, ScheduleSpec: map[string]any{"cron": expr},
		Timezone: "UTC", Status: store.TaskEnabled, OverlapPolicy: "skip", NextRunAt: next}
}

func onceTask(id string, at time.Time) *store.ScheduledTask {
	return &store.ScheduledTask{ID: id, UserID: "alice", ContextMode: scheduler.FreshThreadPerRun, AssistantID: "lead_agent",
		Title: id, Prompt: "prompt of " + id, ScheduleType: scheduler.TypeOnce, ScheduleSpec: map[string]any{"run_at": at.Format(time.RFC3339)},
		Timezone: "UTC", Status: store.TaskEnabled, OverlapPolicy: "skip", NextRunAt: at}
}

func create(t *testing.T, st store.ScheduledTasks, tasks ...*store.ScheduledTask) {
	t.Helper()
	for _, x := range tasks {
		if err := st.CreateScheduledTask(t.Context(), x); err != nil {
			t.Fatal(err)
		}
	}
}

func getTask(t *testing.T, st store.ScheduledTasks, id string) *store.ScheduledTask {
	t.Helper()
	x, err := st.GetScheduledTask(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func runsOf(t *testing.T, st store.ScheduledTasks, id string) []*store.ScheduledTaskRun {
	t.Helper()
	x, err := st.ListScheduledTaskRuns(t.Context(), id, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func runOnce(t *testing.T, d *scheduler.Dispatcher) {
	t.Helper()
	if err := d.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	d.WaitWatches()
}
