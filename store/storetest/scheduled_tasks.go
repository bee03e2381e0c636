package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/antlerhq/antler/store"
)

// RunScheduledTasks is the conformance suite of store.ScheduledTasks.
// Every test gets a fresh store from newStore.
func RunScheduledTasks(t *testing.T, newStore func(t *testing.T) store.ScheduledTasks) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s store.ScheduledTasks)
	}{
		{"TaskCRUD", testTaskCRUD},
		{"ClaimDue", testClaimDue},
		{"ClaimBudget", testClaimBudget},
		{"ClaimConcurrent", testClaimConcurrent},
		{"LeaseAndFinish", testLeaseAndFinish},
		{"TaskRuns", testTaskRuns},
		{"PruneTaskRuns", testPruneTaskRuns},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

var schedT0 = time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)

func newTask(id, user string, next time.Time) *store.ScheduledTask {
	return &store.ScheduledTask{ID: id, UserID: user, ContextMode: "fresh_thread_per_run", AssistantID: "lead_agent",
		Title: "title " + id, Prompt: "prompt " + id, ScheduleType: "cron", ScheduleSpec: map[string]any{"cron": "* * * * *"},
		Timezone: "UTC", Status: store.TaskEnabled, OverlapPolicy: "skip", NextRunAt: next}
}

func mustCreateTask(t *testing.T, s store.ScheduledTasks, task *store.ScheduledTask) {
	t.Helper()
	if err := s.CreateScheduledTask(t.Context(), task); err != nil {
		t.Fatal(err)
	}
}

func scheduledIDs(tasks []*store.ScheduledTask) []string {
	out := []string{}
	for _, x := range tasks {
		out = append(out, x.ID)
	}
	return out
}

func testTaskCRUD(t *testing.T, s store.ScheduledTasks) {
	ctx := t.Context()
	a := newTask("a", "alice", schedT0)
	a.ThreadID = "th1"
	a.CreatedAt = schedT0
	mustCreateTask(t, s, a)
	b := newTask("b", "alice", time.Time{})
	b.CreatedAt = schedT0.Add(time.Second)
	mustCreateTask(t, s, b)
	c := newTask("c", "bob", schedT0)
	c.CreatedAt = schedT0.Add(2 * time.Second)
	mustCreateTask(t, s, c)
	if err := s.CreateScheduledTask(ctx, newTask("a", "x", schedT0)); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate = %v, want ErrExists", err)
	}
	got, err := s.GetScheduledTask(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := s.GetScheduledTask(ctx, "zz"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing = %v, want ErrNotFound", err)
	}
	list, err := s.ListScheduledTasks(ctx, store.TaskQuery{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b", "a"}, scheduledIDs(list)); diff != "" {
		t.Errorf("alice's tasks, newest first (-want +got):\n%s", diff)
	}
	list, _ = s.ListScheduledTasks(ctx, store.TaskQuery{UserID: "alice", ThreadID: "th1"})
	if diff := cmp.Diff([]string{"a"}, scheduledIDs(list)); diff != "" {
		t.Errorf("thread's tasks (-want +got):\n%s", diff)
	}

	title, status, empty := "new", store.TaskPaused, ""
	zero := time.Time{}
	edited, err := s.EditScheduledTask(ctx, "a", store.TaskEdit{Title: &title, Status: &status, ThreadID: &empty,
		NextRunAt: &zero, ScheduleSpec: map[string]any{"cron": "0 9 * * *"}})
	if err != nil {
		t.Fatal(err)
	}
	if edited.Title != "new" || edited.Status != store.TaskPaused || edited.ThreadID != "" || !edited.NextRunAt.IsZero() ||
		edited.ScheduleSpec["cron"] != "0 9 * * *" || edited.Prompt != "prompt a" {
		t.Errorf("edited = %+v", edited)
	}
	if _, err := s.EditScheduledTask(ctx, "zz", store.TaskEdit{Title: &title}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("edit missing = %v, want ErrNotFound", err)
	}

	if err := s.CreateScheduledTaskRun(ctx, &store.ScheduledTaskRun{ID: "r1", TaskID: "a", ThreadID: "th", ScheduledFor: schedT0,
		Trigger: "manual", Status: store.TaskRunSuccess}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteScheduledTask(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteScheduledTask(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete = %v, want ErrNotFound", err)
	}
	if runs, _ := s.ListScheduledTaskRuns(ctx, "a", 10, 0); len(runs) != 0 {
		t.Errorf("runs of a deleted task remain: %d", len(runs))
	}
}

func claim(t *testing.T, s store.ScheduledTasks, owner string, at time.Time, maxActive int) []string {
	t.Helper()
	got, err := s.ClaimDueScheduledTasks(t.Context(), store.ClaimRequest{Now: at, Owner: owner, LeaseFor: time.Minute, MaxActive: maxActive})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range got {
		if x.Status != store.TaskRunning || x.LeaseOwner != owner {
			t.Errorf("claimed %s: status %s owner %s", x.ID, x.Status, x.LeaseOwner)
		}
	}
	return scheduledIDs(got)
}

func testClaimDue(t *testing.T, s store.ScheduledTasks) {
	mustCreateTask(t, s, newTask("due2", "u", schedT0))
	mustCreateTask(t, s, newTask("due1", "u", schedT0.Add(-time.Minute)))
	mustCreateTask(t, s, newTask("later", "u", schedT0.Add(time.Minute)))
	mustCreateTask(t, s, newTask("never", "u", time.Time{}))
	paused := newTask("paused", "u", schedT0)
	paused.Status = store.TaskPaused
	mustCreateTask(t, s, paused)

	if diff := cmp.Diff([]string{"due1", "due2"}, claim(t, s, "A", schedT0, 10)); diff != "" {
		t.Errorf("claim, oldest first (-want +got):\n%s", diff)
	}
	if got := claim(t, s, "B", schedT0.Add(30*time.Second), 10); len(got) != 0 {
		t.Errorf("leased tasks claimed again: %v", got)
	}
	// A's lease expired without a dispatch: the tasks are claimable again.
	if diff := cmp.Diff([]string{"due1", "due2", "later"}, claim(t, s, "B", schedT0.Add(2*time.Minute), 10)); diff != "" {
		t.Errorf("claim after expiry (-want +got):\n%s", diff)
	}
}

func testClaimBudget(t *testing.T, s store.ScheduledTasks) {
	for i := range 4 {
		mustCreateTask(t, s, newTask(fmt.Sprintf("t%d", i), "u", schedT0))
	}
	if err := s.CreateScheduledTaskRun(t.Context(), &store.ScheduledTaskRun{ID: "r", TaskID: "other", ThreadID: "th",
		ScheduledFor: schedT0, Trigger: "scheduled", Status: store.TaskRunRunning}); err != nil {
		t.Fatal(err)
	}
	// One active run and a budget of 3: two claims; the two live
	// reservations then fill the budget.
	if got := claim(t, s, "A", schedT0, 3); len(got) != 2 {
		t.Fatalf("claimed %v, want 2", got)
	}
	if got := claim(t, s, "B", schedT0, 3); len(got) != 0 {
		t.Fatalf("claimed %v beyond the budget", got)
	}
	if n, err := s.CountActiveScheduledTaskRuns(t.Context()); err != nil || n != 1 {
		t.Fatalf("active = %d, %v", n, err)
	}
}

// testClaimConcurrent: dispatchers claiming at once never take one task
// twice.
func testClaimConcurrent(t *testing.T, s store.ScheduledTasks) {
	const tasks, claimers = 20, 4
	for i := range tasks {
		mustCreateTask(t, s, newTask(fmt.Sprintf("t%02d", i), "u", schedT0))
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for c := range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				got, err := s.ClaimDueScheduledTasks(t.Context(), store.ClaimRequest{Now: schedT0, Owner: fmt.Sprint(c), LeaseFor: time.Minute, MaxActive: 100})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, x := range got {
					seen[x.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != tasks {
		t.Errorf("claimed %d tasks, want %d", len(seen), tasks)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("task %s claimed %d times", id, n)
		}
	}
}

func testLeaseAndFinish(t *testing.T, s store.ScheduledTasks) {
	ctx := t.Context()
	mustCreateTask(t, s, newTask("a", "u", schedT0))
	if got := claim(t, s, "A", schedT0, 10); len(got) != 1 {
		t.Fatalf("claimed %v", got)
	}
	// A manual trigger elsewhere cannot lease a task under a live lease.
	if x, err := s.LeaseScheduledTask(ctx, "a", "B", schedT0, time.Minute); err != nil || x != nil {
		t.Fatalf("lease under a live lease = %v, %v", x, err)
	}
	if _, err := s.LeaseScheduledTask(ctx, "zz", "B", schedT0, time.Minute); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("lease of a missing task = %v", err)
	}
	// A stale owner's write is fenced.
	if ok, err := s.FinishScheduledDispatch(ctx, "a", store.DispatchDone{Owner: "B", Status: store.TaskEnabled}); err != nil || ok {
		t.Fatalf("fenced finish = %v, %v", ok, err)
	}
	next := schedT0.Add(time.Minute)
	ok, err := s.FinishScheduledDispatch(ctx, "a", store.DispatchDone{Owner: "A", Status: store.TaskEnabled, NextRunAt: next,
		LastRunAt: schedT0, LastRunID: "run1", LastThreadID: "th1", CountRun: true})
	if err != nil || !ok {
		t.Fatalf("finish = %v, %v", ok, err)
	}
	got, _ := s.GetScheduledTask(ctx, "a")
	want := &store.ScheduledTask{Status: store.TaskEnabled, NextRunAt: next, LastRunAt: schedT0, LastRunID: "run1", LastThreadID: "th1", RunCount: 1}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(store.ScheduledTask{}, "ID", "UserID", "ContextMode", "AssistantID", "Title",
		"Prompt", "ScheduleType", "ScheduleSpec", "Timezone", "OverlapPolicy", "CreatedAt", "UpdatedAt")); diff != "" {
		t.Errorf("after finish (-want +got):\n%s", diff)
	}
	// The lease is free: a manual trigger takes it.
	x, err := s.LeaseScheduledTask(ctx, "a", "B", schedT0, time.Minute)
	if err != nil || x == nil || x.LeaseOwner != "B" {
		t.Fatalf("lease = %+v, %v", x, err)
	}
	// A terminal status written meanwhile is protected.
	done := store.TaskCompleted
	msg := "kept"
	if _, err := s.EditScheduledTask(ctx, "a", store.TaskEdit{Status: &done, LastError: &msg}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.FinishScheduledDispatch(ctx, "a", store.DispatchDone{Owner: "B", Status: store.TaskRunning, ProtectTerminal: true, CountRun: true}); err != nil || !ok {
		t.Fatalf("finish = %v, %v", ok, err)
	}
	got, _ = s.GetScheduledTask(ctx, "a")
	if got.Status != store.TaskCompleted || got.LastError != "kept" || got.RunCount != 2 || got.LeaseOwner != "" {
		t.Errorf("protected = %+v", got)
	}
}

func testTaskRuns(t *testing.T, s store.ScheduledTasks) {
	ctx := t.Context()
	run := func(id, status string, at time.Time) *store.ScheduledTaskRun {
		return &store.ScheduledTaskRun{ID: id, TaskID: "a", ThreadID: "th", ScheduledFor: at, Trigger: "scheduled", Status: status, CreatedAt: at}
	}
	if err := s.CreateScheduledTaskRun(ctx, run("r1", store.TaskRunQueued, schedT0)); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateScheduledTaskRun(ctx, run("r2", store.TaskRunQueued, schedT0.Add(time.Second))); !errors.Is(err, store.ErrActiveScheduledRun) {
		t.Fatalf("second active run = %v, want ErrActiveScheduledRun", err)
	}
	// A skipped tombstone is outside the active rule.
	if err := s.CreateScheduledTaskRun(ctx, run("r3", store.TaskRunSkipped, schedT0.Add(2*time.Second))); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateScheduledTaskRun(ctx, run("r1", store.TaskRunSkipped, schedT0)); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate id = %v, want ErrExists", err)
	}
	active, err := s.ActiveScheduledTaskRuns(ctx, 10)
	if err != nil || len(active) != 1 || active[0].ID != "r1" {
		t.Fatalf("active = %v, %v", active, err)
	}
	if err := s.UpdateScheduledTaskRun(ctx, "r1", store.TaskRunUpdate{Status: store.TaskRunSuccess, RunID: "run1", FinishedAt: schedT0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	// The launch's late "running" write does not undo the outcome.
	if err := s.UpdateScheduledTaskRun(ctx, "r1", store.TaskRunUpdate{Status: store.TaskRunRunning, RunID: "run1", StartedAt: schedT0, ProtectTerminal: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateScheduledTaskRun(ctx, "zz", store.TaskRunUpdate{Status: store.TaskRunFailed}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update missing = %v", err)
	}
	runs, err := s.ListScheduledTaskRuns(ctx, "a", 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []*store.ScheduledTaskRun{
		run("r3", store.TaskRunSkipped, schedT0.Add(2*time.Second)),
		{ID: "r1", TaskID: "a", ThreadID: "th", RunID: "run1", ScheduledFor: schedT0, Trigger: "scheduled", Status: store.TaskRunSuccess,
			StartedAt: schedT0, FinishedAt: schedT0.Add(time.Minute), CreatedAt: schedT0},
	}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if page, _ := s.ListScheduledTaskRuns(ctx, "a", 1, 1); len(page) != 1 || page[0].ID != "r1" {
		t.Errorf("page = %v", page)
	}
	if n, _ := s.CountActiveScheduledTaskRuns(ctx); n != 0 {
		t.Errorf("active after success = %d", n)
	}
	// The task's slot is free again.
	if err := s.CreateScheduledTaskRun(ctx, run("r4", store.TaskRunQueued, schedT0.Add(3*time.Second))); err != nil {
		t.Fatal(err)
	}
}

// testPruneTaskRuns: pruning keeps a task's newest runs and every active
// one, and leaves other tasks alone.
func testPruneTaskRuns(t *testing.T, s store.ScheduledTasks) {
	ctx := t.Context()
	add := func(id, task, status string, i int) {
		t.Helper()
		at := schedT0.Add(time.Duration(i) * time.Minute)
		if err := s.CreateScheduledTaskRun(ctx, &store.ScheduledTaskRun{ID: id, TaskID: task, ThreadID: "th", ScheduledFor: at,
			Trigger: "scheduled", Status: status, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	add("old-active", "a", store.TaskRunRunning, 0)
	for i := 1; i <= 5; i++ {
		add(fmt.Sprintf("r%d", i), "a", store.TaskRunSuccess, i)
		add(fmt.Sprintf("b%d", i), "b", store.TaskRunSuccess, i)
	}
	n, err := s.PruneScheduledTaskRuns(ctx, "a", 2)
	if err != nil || n != 3 {
		t.Fatalf("pruned %d, %v; want 3", n, err)
	}
	runs, _ := s.ListScheduledTaskRuns(ctx, "a", 100, 0)
	var got []string
	for _, r := range runs {
		got = append(got, r.ID)
	}
	if diff := cmp.Diff([]string{"r5", "r4", "old-active"}, got); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if runs, _ := s.ListScheduledTaskRuns(ctx, "b", 100, 0); len(runs) != 5 {
		t.Errorf("another task lost runs: %d", len(runs))
	}
}
