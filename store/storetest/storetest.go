// Package storetest is the conformance suite of store.Store: every
// implementation runs [Run] in its own tests so that the agent loop and the
// gateway can rely on the same behaviour from SQLite and Postgres.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/thread"
)

// Run runs the conformance suite. newStore must return an empty store
// that lives until the test ends (register its Close with t.Cleanup).
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"ThreadCRUD", testThreadCRUD},
		{"ThreadDuplicate", testThreadDuplicate},
		{"SearchThreads", testSearchThreads},
		{"CheckpointRoundTrip", testCheckpointRoundTrip},
		{"CheckpointHistory", testCheckpointHistory},
		{"CheckpointNeedsThread", testCheckpointNeedsThread},
		{"Runs", testRuns},
		{"RunUsage", testRunUsage},
		{"DeleteThreadCascades", testDeleteCascades},
		{"ConcurrentWriters", testConcurrentWriters},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

var timeNear = cmpopts.EquateApproxTime(time.Millisecond)

func testThreadCRUD(t *testing.T, s store.Store) {
	ctx := t.Context()
	th := &store.Thread{ID: "t1", UserID: "alice", AgentName: "coder", Metadata: map[string]any{"graph_id": "lead_agent"}}
	if err := s.CreateThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	if th.CreatedAt.IsZero() || th.Status != store.ThreadIdle {
		t.Fatalf("CreateThread did not fill defaults: %+v", th)
	}
	got, err := s.GetThread(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(th, got, timeNear); diff != "" {
		t.Errorf("GetThread (-want +got):\n%s", diff)
	}
	got.Status, got.Title = store.ThreadBusy, "hello"
	got.Metadata["k"] = "v"
	if err := s.UpdateThread(ctx, got); err != nil {
		t.Fatal(err)
	}
	again, err := s.GetThread(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != store.ThreadBusy || again.Title != "hello" || again.Metadata["k"] != "v" {
		t.Errorf("UpdateThread not persisted: %+v", again)
	}
	if _, err := s.GetThread(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetThread(missing) = %v, want ErrNotFound", err)
	}
	if err := s.UpdateThread(ctx, &store.Thread{ID: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateThread(missing) = %v, want ErrNotFound", err)
	}
}

func testThreadDuplicate(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "dup", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateThread(ctx, &store.Thread{ID: "dup", UserID: "u"}); !errors.Is(err, store.ErrExists) {
		t.Errorf("second CreateThread = %v, want ErrExists", err)
	}
}

func testSearchThreads(t *testing.T, s store.Store) {
	ctx := t.Context()
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	for i, spec := range []struct {
		id, user string
		meta     map[string]any
	}{
		{"a1", "alice", map[string]any{"tag": "x", "n": 1}},
		{"a2", "alice", map[string]any{"tag": "y"}},
		{"a3", "alice", nil},
		{"b1", "bob", map[string]any{"tag": "x"}},
	} {
		ts := base.Add(time.Duration(i) * time.Minute)
		if err := s.CreateThread(ctx, &store.Thread{ID: spec.id, UserID: spec.user, Metadata: spec.meta, CreatedAt: ts, UpdatedAt: ts}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(q store.ThreadQuery) []string {
		t.Helper()
		ts, err := s.SearchThreads(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, th := range ts {
			out = append(out, th.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		q    store.ThreadQuery
		want []string
	}{
		{"all of a user newest first", store.ThreadQuery{UserID: "alice"}, []string{"a3", "a2", "a1"}},
		{"other user", store.ThreadQuery{UserID: "bob"}, []string{"b1"}},
		{"metadata string", store.ThreadQuery{UserID: "alice", Metadata: map[string]any{"tag": "x"}}, []string{"a1"}},
		{"metadata number", store.ThreadQuery{Metadata: map[string]any{"n": 1}}, []string{"a1"}},
		{"metadata across users", store.ThreadQuery{Metadata: map[string]any{"tag": "x"}}, []string{"b1", "a1"}},
		{"limit offset", store.ThreadQuery{UserID: "alice", Limit: 1, Offset: 1}, []string{"a2"}},
		{"status", store.ThreadQuery{UserID: "alice", Status: store.ThreadBusy}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ids(tc.q)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func sampleState(n int) *thread.State {
	st := &thread.State{Title: fmt.Sprintf("title %d", n), Artifacts: []string{"/mnt/user-data/outputs/a.md"}}
	st.Messages = append(st.Messages,
		model.Message{ID: "u1", Role: model.RoleUser, Content: "hi"},
		model.Message{ID: "a1", Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "ls", Arguments: []byte(`{"path":"/"}`)}}},
		model.Message{ID: "m1", Role: model.RoleTool, ToolCallID: "c1", Name: "ls", Content: "x", Status: "error",
			Artifact: map[string]any{"human_input": map[string]any{"version": float64(1)}}},
	)
	for i := range n {
		st.Messages = append(st.Messages, model.Message{ID: fmt.Sprintf("x%d", i), Role: model.RoleAssistant, Content: "step"})
	}
	return st
}

func testCheckpointRoundTrip(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LatestCheckpoint(ctx, "t"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LatestCheckpoint on empty thread = %v, want ErrNotFound", err)
	}
	cp := &store.Checkpoint{ThreadID: "t", RunID: "r1", Step: 1, State: sampleState(1), Metadata: map[string]any{"source": "loop"}}
	if err := s.PutCheckpoint(ctx, cp); err != nil {
		t.Fatal(err)
	}
	if cp.ID == "" || cp.CreatedAt.IsZero() {
		t.Fatalf("PutCheckpoint did not fill id/created_at: %+v", cp)
	}
	got, err := s.LatestCheckpoint(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cp, got, timeNear); diff != "" {
		t.Errorf("LatestCheckpoint (-want +got):\n%s", diff)
	}
	th, err := s.GetThread(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if th.Title != "title 1" {
		t.Errorf("thread title = %q, want the state's title", th.Title)
	}
	byID, err := s.GetCheckpoint(ctx, "t", cp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if byID.ID != cp.ID {
		t.Errorf("GetCheckpoint id = %q", byID.ID)
	}
	if _, err := s.GetCheckpoint(ctx, "t", "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetCheckpoint(missing) = %v", err)
	}
}

func testCheckpointHistory(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	parent := ""
	for i := range 5 {
		cp := &store.Checkpoint{ThreadID: "t", ParentID: parent, Step: i, State: sampleState(i)}
		if err := s.PutCheckpoint(ctx, cp); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cp.ID)
		parent = cp.ID
	}
	all, err := s.ListCheckpoints(ctx, "t", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cp := range all {
		got = append(got, cp.ID)
	}
	want := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListCheckpoints order (-want +got):\n%s", diff)
	}
	page, err := s.ListCheckpoints(ctx, "t", 2, ids[3])
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 || page[0].ID != ids[2] || page[1].ID != ids[1] {
		t.Errorf("ListCheckpoints(limit 2, before #3) = %v", page)
	}
	latest, err := s.LatestCheckpoint(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if latest.ID != ids[4] || latest.ParentID != ids[3] || len(latest.State.Messages) != 3+4 {
		t.Errorf("latest = %s parent %s with %d messages", latest.ID, latest.ParentID, len(latest.State.Messages))
	}
}

func testCheckpointNeedsThread(t *testing.T, s store.Store) {
	err := s.PutCheckpoint(t.Context(), &store.Checkpoint{ThreadID: "ghost", State: &thread.State{}})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutCheckpoint on a missing thread = %v, want ErrNotFound", err)
	}
}

func testRuns(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.CreateRun(ctx, &store.Run{ID: "r0", ThreadID: "ghost"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateRun on a missing thread = %v, want ErrNotFound", err)
	}
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	r1 := &store.Run{ID: "r1", ThreadID: "t", UserID: "u", Status: store.RunRunning, Metadata: map[string]any{"model": "m"}}
	if err := s.CreateRun(ctx, r1); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(ctx, r1); !errors.Is(err, store.ErrExists) {
		t.Errorf("duplicate CreateRun = %v, want ErrExists", err)
	}
	time.Sleep(2 * time.Millisecond)
	if err := s.CreateRun(ctx, &store.Run{ID: "r2", ThreadID: "t", UserID: "u", Status: store.RunRunning}); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateRun(ctx, "r1", store.RunUpdate{Status: store.RunInterrupted, StopReason: "clarification"}); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateRun(ctx, "nope", store.RunUpdate{Status: store.RunError}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateRun(missing) = %v", err)
	}
	got, err := s.GetRun(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunInterrupted || got.StopReason != "clarification" || got.Metadata["model"] != "m" {
		t.Errorf("GetRun = %+v", got)
	}
	runs, err := s.ListRuns(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != "r2" || runs[1].ID != "r1" {
		t.Errorf("ListRuns = %+v", runs)
	}
	if _, err := s.GetRun(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetRun(missing) = %v", err)
	}
}

// testRunUsage checks that a run's token usage is stored with its
// outcome, kept by an update without usage, and listed with the run.
func testRunUsage(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(ctx, &store.Run{ID: "r1", ThreadID: "t", UserID: "u", Status: store.RunRunning}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Usage != nil {
		t.Errorf("usage of a running run = %+v, want nil", got.Usage)
	}
	var usage store.RunUsage
	usage.Add(store.CallerLeadAgent, "lead", model.Usage{InputTokens: 100, OutputTokens: 20, TotalTokens: 120})
	usage.Add(store.CallerSubagent, "sub", model.Usage{InputTokens: 50, OutputTokens: 5})
	usage.Add(store.CallerMiddleware, "", model.Usage{InputTokens: 7, OutputTokens: 3, TotalTokens: 10})
	usage.Add(store.CallerLeadAgent, "lead", model.Usage{}) // no tokens: not counted
	usage.ModelName = "lead"
	want := &store.RunUsage{ModelName: "lead", InputTokens: 157, OutputTokens: 28, TotalTokens: 185,
		LeadAgentTokens: 120, SubagentTokens: 55, MiddlewareTokens: 10,
		ByModel: map[string]model.Usage{
			"lead":             {InputTokens: 100, OutputTokens: 20, TotalTokens: 120},
			"sub":              {InputTokens: 50, OutputTokens: 5, TotalTokens: 55},
			store.UnknownModel: {InputTokens: 7, OutputTokens: 3, TotalTokens: 10},
		}}
	if diff := cmp.Diff(want, &usage); diff != "" {
		t.Fatalf("RunUsage.Add (-want +got):\n%s", diff)
	}
	if err := s.UpdateRun(ctx, "r1", store.RunUpdate{Status: store.RunSuccess, StopReason: "completed", Usage: &usage}); err != nil {
		t.Fatal(err)
	}
	if got, err = s.GetRun(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.Usage); diff != "" {
		t.Errorf("GetRun usage (-want +got):\n%s", diff)
	}
	// An update without usage keeps the recorded one.
	if err := s.UpdateRun(ctx, "r1", store.RunUpdate{Status: store.RunError, StopReason: "error", Error: "late"}); err != nil {
		t.Fatal(err)
	}
	if got, err = s.GetRun(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunError || !cmp.Equal(want, got.Usage) {
		t.Errorf("after an update without usage: status %q, usage %+v", got.Status, got.Usage)
	}
	// A run created with usage (an imported run) keeps it; zero usage is
	// recorded, not nil.
	if err := s.CreateRun(ctx, &store.Run{ID: "r2", ThreadID: "t", UserID: "u", Status: store.RunSuccess,
		Usage: &store.RunUsage{}}); err != nil {
		t.Fatal(err)
	}
	runs, err := s.ListRuns(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	gotUsage := map[string]*store.RunUsage{}
	for _, r := range runs {
		gotUsage[r.ID] = r.Usage
	}
	if diff := cmp.Diff(map[string]*store.RunUsage{"r1": want, "r2": {}}, gotUsage); diff != "" {
		t.Errorf("ListRuns usage (-want +got):\n%s", diff)
	}
}

func testDeleteCascades(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCheckpoint(ctx, &store.Checkpoint{ThreadID: "t", State: sampleState(0)}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(ctx, &store.Run{ID: "r", ThreadID: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LatestCheckpoint(ctx, "t"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("checkpoint survived delete: %v", err)
	}
	if _, err := s.GetRun(ctx, "r"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("run survived delete: %v", err)
	}
	if err := s.DeleteThread(ctx, "t"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete = %v", err)
	}
}

func testConcurrentWriters(t *testing.T, s store.Store) {
	ctx := t.Context()
	const threads, steps = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, threads)
	for i := range threads {
		wg.Go(func() {
			id := fmt.Sprintf("c%d", i)
			if err := s.CreateThread(ctx, &store.Thread{ID: id, UserID: "u"}); err != nil {
				errs <- err
				return
			}
			for j := range steps {
				if err := s.PutCheckpoint(ctx, &store.Checkpoint{ThreadID: id, Step: j, State: sampleState(j)}); err != nil {
					errs <- err
					return
				}
				if _, err := s.LatestCheckpoint(ctx, id); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range threads {
		cps, err := s.ListCheckpoints(context.WithoutCancel(ctx), fmt.Sprintf("c%d", i), 0, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(cps) != steps || cps[0].Step != steps-1 {
			t.Errorf("thread c%d: %d checkpoints, newest step %d", i, len(cps), cps[0].Step)
		}
	}
}
