package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/store"
)

// TaskStore is a store with MCP background tasks.
type TaskStore interface {
	store.Store
	store.MCPTasks
}

// RunMCPTasks is the conformance suite of store.MCPTasks. Every test gets
// a fresh store from newStore.
func RunMCPTasks(t *testing.T, newStore func(t *testing.T) TaskStore) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	setup := func(t *testing.T) TaskStore {
		t.Helper()
		s := newStore(t)
		for _, id := range []string{"t1", "t2"} {
			if err := s.CreateThread(t.Context(), &store.Thread{ID: id, UserID: "u"}); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	task := func(id, thread, remote string, created time.Time) *store.MCPTask {
		return &store.MCPTask{ID: id, UserID: "u", ThreadID: thread, Server: "srv", Toolset: "report", RemoteID: remote,
			SubmitTool: "submit", StatusTool: "status", CancelTool: "cancel", Status: store.MCPTaskSubmitted,
			NextPollAt: created, CreatedAt: created}
	}
	t.Run("create and get keep every field", func(t *testing.T) { testMCPTaskFields(t, setup(t), task, t0) })
	t.Run("create refuses duplicates and missing threads", func(t *testing.T) { testMCPTaskCreateRefusals(t, setup(t), task, t0) })
	t.Run("limits bound active and ended tasks per thread", func(t *testing.T) { testMCPTaskLimits(t, setup(t), task, t0) })
	t.Run("list is one user's thread, newest first", func(t *testing.T) { testMCPTaskList(t, setup(t), task, t0) })
	t.Run("claims are leases", func(t *testing.T) { testMCPTaskLeases(t, setup(t), task, t0) })
	t.Run("cancellation fences polls", func(t *testing.T) { testMCPTaskCancel(t, setup(t), task, t0) })
	t.Run("a change to an end or a question is noticed once", func(t *testing.T) { testMCPTaskNotices(t, setup(t), task, t0) })
	t.Run("failed polls make one notice at their bound", func(t *testing.T) { testMCPTaskDegradedNotice(t, setup(t), task, t0) })
	t.Run("deleting the thread deletes its tasks", func(t *testing.T) {
		s := setup(t)
		if err := s.CreateMCPTask(t.Context(), task("a", "t1", "a", t0), store.MCPTaskLimits{}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteThread(t.Context(), "t1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetMCPTask(t.Context(), "a"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("task of a deleted thread: %v", err)
		}
	})
}

func testMCPTaskFields(t *testing.T, s TaskStore, task func(id, thread, remote string, created time.Time) *store.MCPTask, t0 time.Time) {
	in := task("a", "t1", "r1", t0)
	in.RunID, in.ToolCallID, in.Result, in.InputRequired = "run", "call", json.RawMessage(`{"x":1}`), json.RawMessage(`{"q":"?"}`)
	in.ResultPreview, in.ResultTruncated, in.Error = "pre", true, "e"
	in.LastPolledAt, in.CancelRequestedAt, in.NextCancelAt = t0.Add(time.Second), t0.Add(2*time.Second), t0.Add(3*time.Second)
	in.LeaseOwner, in.LeaseExpiresAt, in.CompletedAt = "o", t0.Add(4*time.Second), t0.Add(5*time.Second)
	in.LastPollError, in.PollErrors, in.PollAttempts, in.CancelAttempts = "pe", 2, 3, 4
	if err := s.CreateMCPTask(t.Context(), in, store.MCPTaskLimits{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMCPTask(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("GetMCPTask (-created +got):\n%s", diff)
	}
}

func testMCPTaskCreateRefusals(t *testing.T, s TaskStore, task func(id, thread, remote string, created time.Time) *store.MCPTask, t0 time.Time) {
	ctx := t.Context()
	if err := s.CreateMCPTask(ctx, task("a", "t1", "r1", t0), store.MCPTaskLimits{}); err != nil {
		t.Fatal(err)
	}
	for name, tk := range map[string]*store.MCPTask{"same id": task("a", "t1", "r2", t0), "same remote id": task("b", "t2", "r1", t0)} {
		if err := s.CreateMCPTask(ctx, tk, store.MCPTaskLimits{}); !errors.Is(err, store.ErrExists) {
			t.Errorf("%s: err = %v, want ErrExists", name, err)
		}
	}
	if err := s.CreateMCPTask(ctx, task("c", "nope", "r3", t0), store.MCPTaskLimits{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing thread: err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetMCPTask(ctx, "zz"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetMCPTask(missing) = %v", err)
	}
}

func testMCPTaskLimits(t *testing.T, s TaskStore, task func(id, thread, remote string, created time.Time) *store.MCPTask, t0 time.Time) {
	ctx := t.Context()
	lim := store.MCPTaskLimits{MaxActive: 2, KeepEnded: 1}
	for i, id := range []string{"a", "b"} {
		if err := s.CreateMCPTask(ctx, task(id, "t1", id, t0.Add(time.Duration(i)*time.Second)), lim); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateMCPTask(ctx, task("c", "t1", "c", t0), lim); !errors.Is(err, store.ErrMCPTaskLimit) {
		t.Fatalf("third active task: err = %v, want ErrMCPTaskLimit", err)
	}
	if err := s.CreateMCPTask(ctx, task("c", "t2", "c", t0), lim); err != nil {
		t.Fatalf("another thread's bound is its own: %v", err)
	}
	for _, tk := range []*store.MCPTask{task("d", "t1", "d", t0.Add(3*time.Second)), task("e", "t1", "e", t0.Add(4*time.Second))} {
		tk.Status = store.MCPTaskCompleted
		if err := s.CreateMCPTask(ctx, tk, lim); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ListMCPTasks(ctx, store.MCPTaskQuery{UserID: "u", ThreadID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"e", "b", "a"}, ids(got)); diff != "" {
		t.Errorf("tasks after pruning ended ones (-want +got):\n%s", diff)
	}
}

func testMCPTaskList(t *testing.T, s TaskStore, task func(id, thread, remote string, created time.Time) *store.MCPTask, t0 time.Time) {
	ctx := t.Context()
	other := task("x", "t1", "x", t0)
	other.UserID = "v"
	ended := task("b", "t1", "b", t0.Add(time.Second))
	ended.Status = store.MCPTaskFailed
	for _, tk := range []*store.MCPTask{task("a", "t1", "a", t0), ended, task("c", "t1", "c", t0.Add(2*time.Second)), task("d", "t2", "d", t0), other} {
		if err := s.CreateMCPTask(ctx, tk, store.MCPTaskLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		q    store.MCPTaskQuery
		want []string
	}{
		{"all", store.MCPTaskQuery{UserID: "u", ThreadID: "t1"}, []string{"c", "b", "a"}},
		{"active", store.MCPTaskQuery{UserID: "u", ThreadID: "t1", ActiveOnly: true}, []string{"c", "a"}},
		{"limit", store.MCPTaskQuery{UserID: "u", ThreadID: "t1", Limit: 1}, []string{"c"}},
		{"other user", store.MCPTaskQuery{UserID: "v", ThreadID: "t1"}, []string{"x"}},
	} {
		got, err := s.ListMCPTasks(ctx, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func ids(ts []*store.MCPTask) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func testMCPTaskLeases(t *testing.T, s TaskStore, task func(id, thread, remote string, created time.Time) *store.MCPTask, t0 time.Time) {
	ctx := t.Context()
	later := task("later", "t1", "later", t0)
	later.NextPollAt = t0.Add(time.Hour)
	for _, tk := range []*store.MCPTask{task("a", "t1", "a", t0), later} {
		if err := s.CreateMCPTask(ctx, tk, store.MCPTaskLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(owner string, at time.Time) []string {
		t.Helper()
		got, err := s.ClaimMCPTasks(ctx, store.MCPTaskClaim{Owner: owner, Now: at, Lease: time.Minute, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return ids(got)
	}
	if diff := cmp.Diff([]string{"a"}, claim("A", t0)); diff != "" {
		t.Fatalf("first claim (-want +got):\n%s", diff)
	}
	if got := claim("B", t0.Add(30*time.Second)); len(got) != 0 {
		t.Fatalf("a leased task was claimed again: %v", got)
	}
	// A's lease expires; B takes the task over, and A's late answer is refused.
	if diff := cmp.Diff([]string{"a"}, claim("B", t0.Add(61*time.Second))); diff != "" {
		t.Fatalf("claim after the lease expired (-want +got):\n%s", diff)
	}
	upd := store.MCPTaskUpdate{Status: store.MCPTaskWorking, NextPollAt: t0.Add(2 * time.Minute)}
	if ok, err := s.FinishMCPTask(ctx, "a", "A", false, t0.Add(62*time.Second), upd); err != nil || ok {
		t.Fatalf("FinishMCPTask by the old owner = %v, %v; want refused", ok, err)
	}
	if ok, err := s.FinishMCPTask(ctx, "a", "B", false, t0.Add(62*time.Second), upd); err != nil || !ok {
		t.Fatalf("FinishMCPTask by the owner = %v, %v", ok, err)
	}
	got, _ := s.GetMCPTask(ctx, "a")
	if got.Status != store.MCPTaskWorking || got.LeaseOwner != "" || got.PollAttempts != 2 || !got.NextPollAt.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("after a poll: %+v", got)
	}
	// A failed poll counts and schedules the next one.
	claim("B", t0.Add(2*time.Minute))
	if ok, err := s.FailMCPTask(ctx, "a", "B", false, t0.Add(2*time.Minute), t0.Add(3*time.Minute), store.MCPTaskFailure{Error: "boom"}); err != nil || !ok {
		t.Fatalf("FailMCPTask = %v, %v", ok, err)
	}
	got, _ = s.GetMCPTask(ctx, "a")
	if got.PollErrors != 1 || got.LastPollError != "boom" || !got.NextPollAt.Equal(t0.Add(3*time.Minute)) || got.LeaseOwner != "" {
		t.Errorf("after a failed poll: %+v", got)
	}
	// A terminal answer ends polling.
	claim("B", t0.Add(3*time.Minute))
	done := store.MCPTaskUpdate{Status: store.MCPTaskCompleted, Result: json.RawMessage(`"ok"`)}
	if ok, err := s.FinishMCPTask(ctx, "a", "B", false, t0.Add(3*time.Minute), done); err != nil || !ok {
		t.Fatalf("FinishMCPTask(completed) = %v, %v", ok, err)
	}
	got, _ = s.GetMCPTask(ctx, "a")
	if got.Status != store.MCPTaskCompleted || string(got.Result) != `"ok"` || !got.NextPollAt.IsZero() || !got.CompletedAt.Equal(t0.Add(3*time.Minute)) || got.PollErrors != 0 {
		t.Errorf("after completion: %+v", got)
	}
	if got := claim("C", t0.Add(24*time.Hour)); len(got) != 1 || got[0] != "later" {
		t.Errorf("claims after completion = %v, want only the later task", got)
	}
}

func testMCPTaskCancel(t *testing.T, s TaskStore, task func(id, thread, remote string, created time.Time) *store.MCPTask, t0 time.Time) {
	ctx := t.Context()
	if err := s.CreateMCPTask(ctx, task("a", "t1", "a", t0), store.MCPTaskLimits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimMCPTasks(ctx, store.MCPTaskClaim{Owner: "A", Now: t0, Lease: time.Minute, Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestMCPTaskCancel(ctx, "a", "u", "t2", t0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cancel from another thread: %v, want ErrNotFound", err)
	}
	got, err := s.RequestMCPTaskCancel(ctx, "a", "u", "t1", t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !got.CancelRequestedAt.Equal(t0.Add(time.Second)) || got.LeaseOwner != "" {
		t.Errorf("after the request: %+v", got)
	}
	// The poll in flight when cancellation was asked is discarded.
	if ok, _ := s.FinishMCPTask(ctx, "a", "A", false, t0.Add(2*time.Second), store.MCPTaskUpdate{Status: store.MCPTaskCompleted}); ok {
		t.Error("a poll's answer was applied after cancellation was asked")
	}
	if polls, _ := s.ClaimMCPTasks(ctx, store.MCPTaskClaim{Owner: "B", Now: t0.Add(time.Hour), Lease: time.Minute, Limit: 5}); len(polls) != 0 {
		t.Errorf("a task asked to cancel was claimed for a poll: %v", ids(polls))
	}
	claimed, err := s.ClaimMCPTasks(ctx, store.MCPTaskClaim{Cancel: true, Owner: "B", Now: t0.Add(2 * time.Second), Lease: time.Minute, Limit: 5})
	if err != nil || len(claimed) != 1 || claimed[0].CancelAttempts != 1 {
		t.Fatalf("cancel claim = %+v, %v", claimed, err)
	}
	if ok, err := s.FailMCPTask(ctx, "a", "B", true, t0.Add(3*time.Second), t0.Add(time.Minute), store.MCPTaskFailure{Error: "unreachable", NoticeAfter: 1}); err != nil || !ok {
		t.Fatalf("FailMCPTask(cancel) = %v, %v", ok, err)
	}
	if again, _ := s.ClaimMCPTasks(ctx, store.MCPTaskClaim{Cancel: true, Owner: "B", Now: t0.Add(4 * time.Second), Lease: time.Minute, Limit: 5}); len(again) != 0 {
		t.Errorf("a cancellation was retried before it was due: %v", ids(again))
	}
	if _, err := s.ClaimMCPTasks(ctx, store.MCPTaskClaim{Cancel: true, Owner: "B", Now: t0.Add(time.Minute), Lease: time.Minute, Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.FinishMCPTask(ctx, "a", "B", true, t0.Add(time.Minute), store.MCPTaskUpdate{Status: store.MCPTaskCancelled}); err != nil || !ok {
		t.Fatalf("FinishMCPTask(cancel) = %v, %v", ok, err)
	}
	got, _ = s.GetMCPTask(ctx, "a")
	if got.Status != store.MCPTaskCancelled || !got.NextCancelAt.IsZero() || got.CancelAttempts != 2 {
		t.Errorf("after cancellation: %+v", got)
	}
	again, err := s.RequestMCPTaskCancel(ctx, "a", "u", "t1", t0.Add(time.Hour))
	if err != nil || !again.CancelRequestedAt.Equal(t0.Add(time.Second)) {
		t.Errorf("cancelling an ended task changed it: %+v, %v", again, err)
	}
}

func testMCPTaskNotices(t *testing.T, s TaskStore, task func(id, thread, remote string, created time.Time) *store.MCPTask, t0 time.Time) {
	ctx := t.Context()
	if err := s.CreateMCPTask(ctx, task("a", "t1", "a", t0), store.MCPTaskLimits{}); err != nil {
		t.Fatal(err)
	}
	claim := func(kind store.MCPTaskClaim, at time.Time) []*store.MCPTask {
		t.Helper()
		kind.Owner, kind.Now, kind.Lease, kind.Limit = "A", at, time.Minute, 5
		got, err := s.ClaimMCPTasks(ctx, kind)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	poll := func(at time.Time, u store.MCPTaskUpdate) {
		t.Helper()
		if len(claim(store.MCPTaskClaim{}, at)) != 1 {
			t.Fatal("the task was not due for a poll")
		}
		if ok, err := s.FinishMCPTask(ctx, "a", "A", false, at, u); err != nil || !ok {
			t.Fatalf("FinishMCPTask = %v, %v", ok, err)
		}
	}
	working := store.MCPTaskUpdate{Status: store.MCPTaskWorking, NextPollAt: t0.Add(time.Minute)}
	poll(t0, working)
	if got := claim(store.MCPTaskClaim{Notify: true}, t0.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("a working task has a notice: %v", ids(got))
	}
	question := store.MCPTaskUpdate{Status: store.MCPTaskInputRequired, InputRequired: json.RawMessage(`{"q":1}`), NextPollAt: t0.Add(2 * time.Minute)}
	poll(t0.Add(time.Minute), question)
	got := claim(store.MCPTaskClaim{Notify: true}, t0.Add(time.Minute))
	if len(got) != 1 || !got[0].NotifyDueAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("notice of the question: %+v", got)
	}
	// A failed delivery is counted and due again later; then delivered.
	if ok, err := s.SettleMCPTaskNotice(ctx, "a", "A", t0.Add(time.Minute), t0.Add(90*time.Second), "busy"); err != nil || !ok {
		t.Fatalf("SettleMCPTaskNotice(failed) = %v, %v", ok, err)
	}
	if got := claim(store.MCPTaskClaim{Notify: true}, t0.Add(80*time.Second)); len(got) != 0 {
		t.Fatal("a failed notice was due again before its time")
	}
	got = claim(store.MCPTaskClaim{Notify: true}, t0.Add(90*time.Second))
	if len(got) != 1 || got[0].NotifyAttempts != 1 || got[0].NotifyError != "busy" {
		t.Fatalf("retried notice: %+v", got)
	}
	if ok, err := s.SettleMCPTaskNotice(ctx, "a", "A", t0.Add(100*time.Second), time.Time{}, ""); err != nil || !ok {
		t.Fatalf("SettleMCPTaskNotice(delivered) = %v, %v", ok, err)
	}
	// The same question polled again is no new notice; the end is.
	poll(t0.Add(2*time.Minute), question)
	if got := claim(store.MCPTaskClaim{Notify: true}, t0.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("an unchanged status was noticed again: %v", ids(got))
	}
	poll(t0.Add(3*time.Minute), store.MCPTaskUpdate{Status: store.MCPTaskCompleted, Result: json.RawMessage(`1`)})
	got = claim(store.MCPTaskClaim{Notify: true}, t0.Add(3*time.Minute))
	if len(got) != 1 || got[0].Status != store.MCPTaskCompleted || got[0].NotifyAttempts != 0 || !got[0].NotifiedAt.Equal(t0.Add(100*time.Second)) {
		t.Fatalf("notice of the end: %+v", got)
	}
	if ok, err := s.SettleMCPTaskNotice(ctx, "a", "B", t0.Add(3*time.Minute), time.Time{}, ""); err != nil || ok {
		t.Errorf("a notice settled by another owner: %v, %v", ok, err)
	}
	if ok, err := s.SettleMCPTaskNotice(ctx, "a", "A", t0.Add(3*time.Minute), time.Time{}, "gave up"); err != nil || !ok {
		t.Fatalf("SettleMCPTaskNotice(given up) = %v, %v", ok, err)
	}
	final, _ := s.GetMCPTask(ctx, "a")
	if !final.NotifyDueAt.IsZero() || final.NotifyError != "gave up" || final.LeaseOwner != "" {
		t.Errorf("after giving up: %+v", final)
	}
}

func testMCPTaskDegradedNotice(t *testing.T, s TaskStore, task func(id, thread, remote string, created time.Time) *store.MCPTask, t0 time.Time) {
	ctx := t.Context()
	if err := s.CreateMCPTask(ctx, task("a", "t1", "a", t0), store.MCPTaskLimits{}); err != nil {
		t.Fatal(err)
	}
	var noticed []bool
	at := t0
	for range 3 {
		if got, err := s.ClaimMCPTasks(ctx, store.MCPTaskClaim{Owner: "A", Now: at, Lease: time.Minute, Limit: 1}); err != nil || len(got) != 1 {
			t.Fatalf("poll claim = %v, %v", got, err)
		}
		if ok, err := s.FailMCPTask(ctx, "a", "A", false, at, at.Add(time.Second), store.MCPTaskFailure{Error: "down", NoticeAfter: 2}); err != nil || !ok {
			t.Fatalf("FailMCPTask = %v, %v", ok, err)
		}
		at = at.Add(time.Second)
		got, _ := s.GetMCPTask(ctx, "a")
		noticed = append(noticed, !got.NotifyDueAt.IsZero())
		if !got.NotifyDueAt.IsZero() {
			if _, err := s.ClaimMCPTasks(ctx, store.MCPTaskClaim{Notify: true, Owner: "A", Now: at, Lease: time.Minute, Limit: 1}); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.SettleMCPTaskNotice(ctx, "a", "A", at, time.Time{}, ""); err != nil || !ok {
				t.Fatalf("SettleMCPTaskNotice = %v, %v", ok, err)
			}
		}
	}
	if diff := cmp.Diff([]bool{false, true, false}, noticed); diff != "" {
		t.Errorf("notice due after each failed poll (-want +got):\n%s", diff)
	}
}
