package mcptasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/tool"
)

// scriptedNotifier answers each notice of a task with the next error of
// the task's script (none left: delivered) and counts the notices.
type scriptedNotifier struct {
	mu     sync.Mutex
	script map[string][]error
	got    map[string]int // notices per "task status"
}

func (n *scriptedNotifier) NotifyMCPTask(_ context.Context, t *store.MCPTask) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got[t.ID+" "+t.Status]++
	errs := n.script[t.ID]
	if len(errs) == 0 {
		return nil
	}
	n.script[t.ID] = errs[1:]
	return errs[0]
}

// noticeFixture is a runtime over SQLite holding tasks a (and b) that
// the server reports completed.
func noticeFixture(t *testing.T, clock *time.Time) (*Runtime, store.MCPTasks) {
	t.Helper()
	st, err := sqlite.OpenDir(t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateThread(t.Context(), &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if err := st.CreateMCPTask(t.Context(), &store.MCPTask{ID: id, UserID: "u", ThreadID: "t", Server: "srv", Toolset: "x", RemoteID: "r-" + id,
			SubmitTool: "submit", StatusTool: "status", CancelTool: "cancel", Status: store.MCPTaskWorking, NextPollAt: *clock, CreatedAt: *clock},
			store.MCPTaskLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	done := doneServer{}
	r, err := New(Options{Store: st, MCP: done, Now: func() time.Time { return *clock }})
	if err != nil {
		t.Fatal(err)
	}
	return r, st
}

// doneServer reports every task completed.
type doneServer struct{}

func (doneServer) ToolsOf(context.Context, []string) ([]*tool.Tool, error) {
	h := func(_ context.Context, _ *tool.Call, args json.RawMessage) (*tool.Result, error) {
		var in struct {
			TaskID string `json:"task_id"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		return &tool.Result{Artifact: map[string]any{"structured_content": map[string]any{"task_id": in.TaskID, "status": "completed", "result": "ok"}}}, nil
	}
	return []*tool.Tool{{Name: "srv_status", Meta: map[string]string{"mcp_server": "srv", "mcp_tool": "status"}, Handler: h}}, nil
}

// A task's end is noticed once through the attached notifier; a failed
// notice is retried after the backoff; a refused one is given up.
func TestNotices(t *testing.T) {
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	r, st := noticeFixture(t, &clock)
	if err := r.RunOnce(t.Context()); err != nil { // polls: both complete; no notifier yet
		t.Fatal(err)
	}
	if a, _ := st.GetMCPTask(t.Context(), "a"); a.Status != store.MCPTaskCompleted || !a.NotifyDueAt.Equal(clock) {
		t.Fatalf("after completion without a notifier: %+v", a)
	}
	n := &scriptedNotifier{got: map[string]int{}, script: map[string][]error{
		"a": {errors.New("thread busy")}, "b": {fmt.Errorf("thread gone: %w", ErrNoticeRefused)}}}
	r.AttachNotifier(n)
	pass := func(d time.Duration) {
		t.Helper()
		clock = clock.Add(d)
		if err := r.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	pass(0)               // a: busy (due again in 5 s); b: refused (given up)
	pass(time.Second)     // nothing due
	pass(4 * time.Second) // a: delivered
	pass(time.Hour)       // nothing due
	n.mu.Lock()
	got := n.got
	n.mu.Unlock()
	if diff := cmp.Diff(map[string]int{"a completed": 2, "b completed": 1}, got); diff != "" {
		t.Errorf("notices (-want +got):\n%s", diff)
	}
	a, _ := st.GetMCPTask(t.Context(), "a")
	b, _ := st.GetMCPTask(t.Context(), "b")
	if !a.NotifyDueAt.IsZero() || a.NotifiedAt.IsZero() || a.NotifyError != "" {
		t.Errorf("a after delivery: due %v, notified %v, error %q", a.NotifyDueAt, a.NotifiedAt, a.NotifyError)
	}
	if !b.NotifyDueAt.IsZero() || !b.NotifiedAt.IsZero() || b.NotifyError == "" {
		t.Errorf("b after refusal: due %v, notified %v, error %q", b.NotifyDueAt, b.NotifiedAt, b.NotifyError)
	}
}
