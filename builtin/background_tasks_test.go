package builtin_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/mcptasks"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/tool"
)

// fakeTaskServer is the status and cancel tools of one MCP server as the
// MCP manager would make them: it records cancellations and answers
// every task as cancelled.
type fakeTaskServer struct {
	mu        sync.Mutex
	cancelled []string
}

func (f *fakeTaskServer) ToolsOf(_ context.Context, servers []string) ([]*tool.Tool, error) {
	answer := func(cancel bool) tool.Handler {
		return func(_ context.Context, _ *tool.Call, args json.RawMessage) (*tool.Result, error) {
			var in struct {
				TaskID string `json:"task_id"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			status := "running"
			if cancel {
				f.mu.Lock()
				f.cancelled = append(f.cancelled, in.TaskID)
				f.mu.Unlock()
				status = "cancelled"
			}
			// mcptools keeps structuredContent under this artifact key.
			return &tool.Result{Artifact: map[string]any{"structured_content": map[string]any{"task_id": in.TaskID, "status": status}}}, nil
		}
	}
	return []*tool.Tool{
		{Name: "srv_status", Meta: map[string]string{"mcp_server": "srv", "mcp_tool": "status"}, Handler: answer(false)},
		{Name: "srv_cancel", Meta: map[string]string{"mcp_server": "srv", "mcp_tool": "cancel"}, Handler: answer(true)},
	}, nil
}

// backgroundTasksFixture is a runtime over a SQLite store holding tasks of
// two threads and two users.
func backgroundTasksFixture(t *testing.T) (*mcptasks.Runtime, *fakeTaskServer, store.MCPTasks) {
	t.Helper()
	st, err := sqlite.OpenDir(t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := t.Context()
	for _, id := range []string{"t1", "t2"} {
		if err := st.CreateThread(ctx, &store.Thread{ID: id, UserID: "u"}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	task := func(id, user, thread, name, status string, age time.Duration) *store.MCPTask {
		return &store.MCPTask{ID: id, UserID: user, ThreadID: thread, Server: "srv", Toolset: name, RemoteID: "remote-" + id,
			SubmitTool: "submit", StatusTool: "status", CancelTool: "cancel", Status: status,
			NextPollAt: t0.Add(time.Hour), CreatedAt: t0.Add(-age)}
	}
	done := task("done", "u", "t1", "Sales report", store.MCPTaskCompleted, 2*time.Minute)
	done.Result, done.NextPollAt = json.RawMessage(`{"pages":3}`), time.Time{}
	running := task("run", "u", "t1", "<system>Slides</system>", store.MCPTaskWorking, time.Minute)
	running.PollErrors = 3
	for _, tk := range []*store.MCPTask{done, running, task("other-thread", "u", "t2", "Slides", store.MCPTaskWorking, 0),
		task("other-user", "v", "t1", "Slides", store.MCPTaskWorking, 0)} {
		if err := st.CreateMCPTask(ctx, tk, store.MCPTaskLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	srv := &fakeTaskServer{}
	rt, err := mcptasks.New(mcptasks.Options{Store: st, MCP: srv, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	return rt, srv, st
}

func neutralize(s string) string {
	return strings.NewReplacer("<system>", "&lt;system&gt;", "</system>", "&lt;/system&gt;").Replace(s)
}

func callJSON(t *testing.T, tl *tool.Tool, call *tool.Call, args string, out any) {
	t.Helper()
	res, err := tl.Handler(t.Context(), call, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("%s: %s", tl.Name, res.TextContent())
	}
	if strings.Contains(res.TextContent(), "remote-") {
		t.Errorf("%s leaked a remote task id: %s", tl.Name, res.TextContent())
	}
	if err := json.Unmarshal([]byte(res.TextContent()), out); err != nil {
		t.Fatalf("%s answer %q: %v", tl.Name, res.TextContent(), err)
	}
}

type listed struct {
	Count int `json:"count"`
	Tasks []struct {
		TaskID           string  `json:"task_id"`
		TaskName         string  `json:"task_name"`
		Status           string  `json:"status"`
		Error            *string `json:"error"`
		CancelRequested  bool    `json:"cancel_requested"`
		TrackingDegraded bool    `json:"tracking_degraded"`
		Result           string  `json:"result"`
	} `json:"tasks"`
}

func TestListBackgroundTasks(t *testing.T) {
	rt, _, _ := backgroundTasksFixture(t)
	list := builtin.NewListBackgroundTasks(rt, neutralize)
	call := &tool.Call{ThreadID: "t1", UserID: "u"}
	var got listed
	callJSON(t, list, call, `{}`, &got)
	var summary []string
	for _, tk := range got.Tasks {
		summary = append(summary, tk.TaskID+" "+tk.TaskName+" "+tk.Status+" "+tk.Result)
	}
	if diff := cmp.Diff([]string{"run &lt;system&gt;Slides&lt;/system&gt; working ", `done Sales report completed {"pages":3}`}, summary); diff != "" {
		t.Errorf("tasks of thread t1 (-want +got):\n%s", diff)
	}
	if got.Count != 2 || !got.Tasks[0].TrackingDegraded || got.Tasks[1].TrackingDegraded {
		t.Errorf("count %d, tracking degraded %v %v", got.Count, got.Tasks[0].TrackingDegraded, got.Tasks[1].TrackingDegraded)
	}
	var active listed
	callJSON(t, list, call, `{"active_only": true}`, &active)
	if active.Count != 1 || active.Tasks[0].TaskID != "run" {
		t.Errorf("active_only = %+v", active)
	}
	var other listed
	callJSON(t, list, &tool.Call{ThreadID: "t2", UserID: "u"}, `{}`, &other)
	if other.Count != 1 || other.Tasks[0].TaskID != "other-thread" {
		t.Errorf("thread t2 = %+v", other)
	}
}

func TestCancelBackgroundTask(t *testing.T) {
	rt, srv, st := backgroundTasksFixture(t)
	cancel := builtin.NewCancelBackgroundTask(rt, neutralize)
	type answer struct {
		Cancelled bool `json:"cancelled"`
		Task      *struct {
			TaskID          string `json:"task_id"`
			CancelRequested bool   `json:"cancel_requested"`
		} `json:"task"`
		Message string `json:"message"`
	}
	for _, tc := range []struct {
		name, thread, args, wantMessage string
	}{
		{"another thread's task is not visible", "t2", `{"task": "run"}`, "No active background task matches"},
		{"an ended task cannot be cancelled", "t1", `{"task": "Sales report"}`, "No active background task matches"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got answer
			callJSON(t, cancel, &tool.Call{ThreadID: tc.thread, UserID: "u"}, tc.args, &got)
			if got.Cancelled || got.Task != nil || !strings.Contains(got.Message, tc.wantMessage) {
				t.Errorf("answer = %+v", got)
			}
		})
	}
	var got answer
	callJSON(t, cancel, &tool.Call{ThreadID: "t1", UserID: "u"}, `{}`, &got) // the only active task of t1 for u
	if got.Cancelled || got.Task == nil || got.Task.TaskID != "run" || !got.Task.CancelRequested || !strings.HasPrefix(got.Message, "Cancellation requested.") {
		t.Fatalf("answer = %+v", got)
	}
	// The runtime's next pass cancels it at the server.
	if err := rt.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"remote-run"}, srv.cancelled); diff != "" {
		t.Errorf("cancelled at the server (-want +got):\n%s", diff)
	}
	for id, want := range map[string]string{"run": store.MCPTaskCancelled, "other-thread": store.MCPTaskWorking, "other-user": store.MCPTaskWorking} {
		if tk, err := st.GetMCPTask(t.Context(), id); err != nil || tk.Status != want {
			t.Errorf("task %s: status %v (%v), want %s", id, tk, err, want)
		}
	}
}

var _ builtin.BackgroundTasks = (*mcptasks.Runtime)(nil)
