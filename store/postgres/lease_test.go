package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
	"github.com/antlerhq/antler/thread"
)

// twoReplicas opens two stores on one schema, as two gateway replicas.
func twoReplicas(t *testing.T) (a, b *postgres.Store) {
	t.Helper()
	a = open(t)
	var schema string
	if err := a.Pool().QueryRow(t.Context(), `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	b, err := postgres.Open(t.Context(), urlOf(t), postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return a, b
}

func newLeases(t *testing.T, s *postgres.Store, o postgres.LeaseOptions) *postgres.Leases {
	t.Helper()
	l := postgres.NewLeases(s, o)
	t.Cleanup(func() { l.Close() })
	return l
}

func TestLeaseOneRunPerThreadAcrossReplicas(t *testing.T) {
	a, b := twoReplicas(t)
	ctx := t.Context()
	if err := a.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	la := newLeases(t, a, postgres.LeaseOptions{Owner: "A"})
	lb := newLeases(t, b, postgres.LeaseOptions{Owner: "B"})
	release, err := la.Acquire(ctx, "t", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lb.Acquire(ctx, "t", "r2"); !errors.Is(err, postgres.ErrLeaseHeld) {
		t.Fatalf("second acquire on another replica = %v, want ErrLeaseHeld", err)
	}
	if _, err := la.Acquire(ctx, "t", "r3"); !errors.Is(err, postgres.ErrLeaseHeld) {
		t.Fatalf("second acquire on the same replica = %v, want ErrLeaseHeld", err)
	}
	got, ok, err := lb.Get(ctx, "t")
	if err != nil || !ok || got.RunID != "r1" || got.Owner != "A" {
		t.Fatalf("Get = %+v %v %v", got, ok, err)
	}
	release()
	release() // idempotent
	rb, err := lb.Acquire(ctx, "t", "r2")
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	rb()
	if _, err := la.Acquire(ctx, "ghost", "r"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("acquire on a missing thread = %v, want ErrNotFound", err)
	}
}

func TestLeaseConcurrentAcquireGrantsOne(t *testing.T) {
	a, b := twoReplicas(t)
	ctx := t.Context()
	const threads, tries = 5, 8
	for i := range threads {
		if err := a.CreateThread(ctx, &store.Thread{ID: fmt.Sprint("t", i), UserID: "u"}); err != nil {
			t.Fatal(err)
		}
	}
	ls := []*postgres.Leases{newLeases(t, a, postgres.LeaseOptions{}), newLeases(t, b, postgres.LeaseOptions{})}
	var granted [threads]atomic.Int32
	var wg sync.WaitGroup
	for i := range threads {
		for j := range tries {
			wg.Go(func() {
				_, err := ls[j%2].Acquire(ctx, fmt.Sprint("t", i), fmt.Sprint("r", i, "-", j))
				switch {
				case err == nil:
					granted[i].Add(1)
				case !errors.Is(err, postgres.ErrLeaseHeld):
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	for i := range threads {
		if n := granted[i].Load(); n != 1 {
			t.Errorf("thread t%d: %d leases granted, want 1", i, n)
		}
	}
}

func TestLeaseHeartbeatKeepsRunAlive(t *testing.T) {
	a, b := twoReplicas(t)
	ctx := t.Context()
	if err := a.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	la := newLeases(t, a, postgres.LeaseOptions{TTL: 300 * time.Millisecond})
	lb := newLeases(t, b, postgres.LeaseOptions{TTL: 300 * time.Millisecond})
	release, err := la.Acquire(ctx, "t", "r1")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	time.Sleep(time.Second) // three TTLs: only the heartbeat keeps it
	if _, err := lb.Acquire(ctx, "t", "r2"); !errors.Is(err, postgres.ErrLeaseHeld) {
		t.Fatalf("acquire while the holder heartbeats = %v, want ErrLeaseHeld", err)
	}
}

// TestLeaseExpiryFailsRunKeepsCheckpoints is the dead-replica case: the
// holder stops heartbeating mid-run; after the TTL the sweeper of the
// other replica fails the run, the thread is usable again, every
// checkpoint written is still there, and a late write of the dead run is
// refused.
func TestLeaseExpiryFailsRunKeepsCheckpoints(t *testing.T) {
	a, b := twoReplicas(t)
	ctx := t.Context()
	if err := a.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u", Status: store.ThreadBusy}); err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	la := postgres.NewLeases(a, postgres.LeaseOptions{TTL: ttl})
	lb := newLeases(t, b, postgres.LeaseOptions{TTL: ttl, SweepInterval: 50 * time.Millisecond})
	if _, err := la.Acquire(ctx, "t", "r1"); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateRun(ctx, &store.Run{ID: "r1", ThreadID: "t", UserID: "u", Status: store.RunRunning}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := a.PutCheckpoint(ctx, &store.Checkpoint{ThreadID: "t", RunID: "r1", Step: i, State: &thread.State{Title: fmt.Sprint(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	la.Close() // the replica dies: no more heartbeats, no release

	deadline := time.Now().Add(10 * ttl)
	for {
		r, err := b.GetRun(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == store.RunError {
			if r.Error != postgres.LostLeaseError {
				t.Errorf("failed run's error = %q", r.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run still %q %v after the lease expired", r.Status, 10*ttl)
		}
		time.Sleep(20 * time.Millisecond)
	}
	th, err := b.GetThread(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if th.Status == store.ThreadBusy {
		t.Errorf("thread still busy after its run was failed")
	}
	cps, err := b.ListCheckpoints(ctx, "t", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 3 || cps[0].Step != 2 {
		t.Errorf("checkpoints after failure: %d (newest step %d), want 3", len(cps), cps[0].Step)
	}
	release, err := lb.Acquire(ctx, "t", "r2")
	if err != nil {
		t.Fatalf("thread not usable after the sweep: %v", err)
	}
	defer release()
	err = a.PutCheckpoint(ctx, &store.Checkpoint{ThreadID: "t", RunID: "r1", Step: 3, State: &thread.State{}})
	if !errors.Is(err, postgres.ErrLeaseLost) {
		t.Errorf("late checkpoint of the dead run = %v, want ErrLeaseLost", err)
	}
	if err := b.PutCheckpoint(ctx, &store.Checkpoint{ThreadID: "t", RunID: "r2", Step: 3, State: &thread.State{}}); err != nil {
		t.Errorf("checkpoint of the new holder: %v", err)
	}
}

// TestLeaseTakeoverOnAcquire: an expired lease is taken over by the next
// Acquire even before any sweep, and its run is failed in the same
// transaction.
func TestLeaseTakeoverOnAcquire(t *testing.T) {
	a, b := twoReplicas(t)
	ctx := t.Context()
	if err := a.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	la := postgres.NewLeases(a, postgres.LeaseOptions{TTL: 100 * time.Millisecond})
	lb := newLeases(t, b, postgres.LeaseOptions{TTL: time.Minute}) // sweeps every 30 s: not in this test
	if _, err := la.Acquire(ctx, "t", "r1"); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateRun(ctx, &store.Run{ID: "r1", ThreadID: "t", Status: store.RunRunning}); err != nil {
		t.Fatal(err)
	}
	la.Close()
	time.Sleep(250 * time.Millisecond)
	release, err := lb.Acquire(ctx, "t", "r2")
	if err != nil {
		t.Fatalf("takeover of an expired lease: %v", err)
	}
	defer release()
	if r, _ := b.GetRun(ctx, "r1"); r == nil || r.Status != store.RunError {
		t.Errorf("abandoned run = %+v, want status error", r)
	}
}

// TestLeaseLostIsReported: a holder whose lease was swept (it stalled
// past the TTL) learns it on its next heartbeat.
func TestLeaseLostIsReported(t *testing.T) {
	a, b := twoReplicas(t)
	ctx := t.Context()
	if err := a.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	lost := make(chan string, 1)
	la := newLeases(t, a, postgres.LeaseOptions{TTL: time.Second, Heartbeat: 50 * time.Millisecond,
		OnLost: func(_, runID string) { lost <- runID }})
	if _, err := la.Acquire(ctx, "t", "r1"); err != nil {
		t.Fatal(err)
	}
	// Simulate a stall: the row expires behind the holder's back.
	if _, err := b.Pool().Exec(ctx, `UPDATE antler_run_leases SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	lb := newLeases(t, b, postgres.LeaseOptions{})
	if _, err := lb.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-lost:
		if id != "r1" {
			t.Errorf("lost run %q", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnLost not called")
	}
}

// TestLeaseSweep_failsRunLeftRunningAfterItsThreadTookANewRun is the
// connection-loss case: a run whose outcome could not be written (the
// database connection died) is still recorded as running when its
// replica releases the lease, and its thread takes a new run at once. The
// sweep fails the orphan, though no expired lease names it, and leaves the
// new run, its thread's busy status, and a run recorded without a lease
// (a CLI run) alone. A thread left busy after its run's outcome was
// written takes the status of that outcome.
func TestLeaseSweep_failsRunLeftRunningAfterItsThreadTookANewRun(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	for _, id := range []string{"t", "cli", "done"} {
		if err := s.CreateThread(ctx, &store.Thread{ID: id, UserID: "u", Status: store.ThreadBusy}); err != nil {
			t.Fatal(err)
		}
	}
	l := newLeases(t, s, postgres.LeaseOptions{Owner: "A", TTL: time.Minute}) // no periodic sweep in this test
	release1, err := l.Acquire(ctx, "t", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRunOwned(ctx, &store.Run{ID: "r1", ThreadID: "t", UserID: "u", Status: store.RunRunning}, l.Owner()); err != nil {
		t.Fatal(err)
	}
	release1() // the outcome of r1 was never written
	release2, err := l.Acquire(ctx, "t", "r2")
	if err != nil {
		t.Fatal(err)
	}
	defer release2()
	if err := s.CreateRunOwned(ctx, &store.Run{ID: "r2", ThreadID: "t", UserID: "u", Status: store.RunRunning}, l.Owner()); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(ctx, &store.Run{ID: "r-cli", ThreadID: "cli", UserID: "u", Status: store.RunRunning}); err != nil {
		t.Fatal(err)
	}
	// A run whose outcome was written but not its thread's status.
	release3, err := l.Acquire(ctx, "done", "r3")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRunOwned(ctx, &store.Run{ID: "r3", ThreadID: "done", UserID: "u", Status: store.RunRunning}, l.Owner()); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateRun(ctx, "r3", store.RunUpdate{Status: store.RunInterrupted}); err != nil {
		t.Fatal(err)
	}
	release3()

	swept, err := l.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(swept) != 1 || swept[0] != "r1" {
		t.Errorf("swept %v, want [r1]", swept)
	}
	want := map[string]struct{ status, err string }{
		"r1":    {store.RunError, postgres.OrphanedRunError},
		"r2":    {store.RunRunning, ""},
		"r-cli": {store.RunRunning, ""},
	}
	for id, w := range want {
		r, err := s.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != w.status || r.Error != w.err {
			t.Errorf("run %s: status %q error %q, want %q %q", id, r.Status, r.Error, w.status, w.err)
		}
	}
	for _, id := range []string{"t", "cli"} {
		if th, err := s.GetThread(ctx, id); err != nil || th.Status != store.ThreadBusy {
			t.Errorf("thread %s = %+v, %v; want still busy", id, th, err)
		}
	}
	if th, err := s.GetThread(ctx, "done"); err != nil || th.Status != store.ThreadInterrupted {
		t.Errorf("thread of the interrupted run = %+v, %v; want interrupted", th, err)
	}
	// Without a new run, the orphan's thread is freed as well.
	release2()
	if _, err := l.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := s.GetRun(ctx, "r2"); err != nil || r.Status != store.RunError {
		t.Errorf("r2 after its lease went = %+v, %v; want error", r, err)
	}
	if th, err := s.GetThread(ctx, "t"); err != nil || th.Status != store.ThreadError {
		t.Errorf("thread t = %+v, %v; want error", th, err)
	}
}
