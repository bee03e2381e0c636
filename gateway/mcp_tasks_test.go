package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/gateway"
	"github.com/antlerhq/antler/mcptasks"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/tool"
)

// noMCP is an MCP manager without servers: the routes never call one.
type noMCP struct{}

func (noMCP) ToolsOf(context.Context, []string) ([]*tool.Tool, error) { return nil, nil }

// The thread-scoped task routes in DeerFlow's shapes: the caller's tasks
// of the thread only, a detail, a cancellation recorded; the remote id
// never shown.
func TestMCPTaskRoutes(t *testing.T) {
	e := newEnv(t, envOptions{gateway: func(o *gateway.Options) {
		rt, err := mcptasks.New(mcptasks.Options{Store: o.Store.(store.MCPTasks), MCP: noMCP{}})
		if err != nil {
			t.Fatal(err)
		}
		o.MCPTasks = rt
	}})
	var features map[string]map[string]bool
	e.json("GET", "/api/features", "", nil, 200, &features)
	if !features["mcp_tasks"]["enabled"] {
		t.Errorf("features = %v, want mcp_tasks enabled", features)
	}
	for _, tid := range []string{"t1", "t2"} {
		e.json("POST", "/api/threads", "", map[string]any{"thread_id": tid}, 200, nil)
	}
	t0 := time.Now().UTC().Truncate(time.Second)
	for i, tk := range []*store.MCPTask{
		{ID: "a", ThreadID: "t1", Toolset: "Report", Status: store.MCPTaskCompleted, Result: json.RawMessage(`{"pages":3}`)},
		{ID: "b", ThreadID: "t1", Toolset: "Slides", Status: store.MCPTaskWorking, PollErrors: 3},
		{ID: "c", ThreadID: "t2", Toolset: "Other", Status: store.MCPTaskWorking},
	} {
		tk.UserID, tk.Server, tk.RemoteID = e.gw.DefaultUserID(), "srv", "remote-"+tk.ID
		tk.SubmitTool, tk.StatusTool, tk.CancelTool = "s", "st", "c"
		tk.CreatedAt = t0.Add(time.Duration(i) * time.Second)
		if err := e.store.CreateMCPTask(t.Context(), tk, store.MCPTaskLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	var list []map[string]any
	e.json("GET", "/api/threads/t1/mcp-tasks?limit=20", "", nil, 200, &list)
	if len(list) != 2 || list[0]["task_id"] != "b" || list[1]["task_id"] != "a" || list[0]["tracking_degraded"] != true {
		t.Fatalf("list = %v", list)
	}
	if _, leaked := list[0]["remote_task_id"]; leaked {
		t.Error("the remote task id is shown")
	}
	var detail map[string]any
	e.json("GET", "/api/threads/t1/mcp-tasks/a", "", nil, 200, &detail)
	if detail["status"] != "completed" || detail["result"].(map[string]any)["pages"] != 3.0 || detail["notification_status"] != "none" || detail["notification_attempt_count"] != 0.0 {
		t.Errorf("detail = %v", detail)
	}
	for path, want := range map[string]int{
		"/api/threads/t2/mcp-tasks/a":          http.StatusNotFound, // another thread's task
		"/api/threads/t1/mcp-tasks/zz":         http.StatusNotFound,
		"/api/threads/nope/mcp-tasks":          http.StatusNotFound,
		"/api/threads/t1/mcp-tasks?limit=1000": http.StatusUnprocessableEntity,
	} {
		if got := e.status("GET", path, "", nil); got != want {
			t.Errorf("GET %s = %d, want %d", path, got, want)
		}
	}
	e.json("POST", "/api/threads/t1/mcp-tasks/b/cancel", "", nil, 200, &detail)
	if detail["cancel_requested"] != true || detail["status"] != "working" {
		t.Errorf("cancel = %v", detail)
	}
	if got := e.status("POST", "/api/threads/t1/mcp-tasks/c/cancel", "", nil); got != http.StatusNotFound {
		t.Errorf("cancel of another thread's task = %d", got)
	}
}

// Without the runtime the routes answer 503 and the features say off.
func TestMCPTaskRoutesDisabled(t *testing.T) {
	e := newEnv(t, envOptions{})
	var features map[string]map[string]bool
	e.json("GET", "/api/features", "", nil, 200, &features)
	if features["mcp_tasks"]["enabled"] {
		t.Error("mcp_tasks enabled without a runtime")
	}
	e.json("POST", "/api/threads", "", map[string]any{"thread_id": "t1"}, 200, nil)
	if got := e.status("GET", "/api/threads/t1/mcp-tasks", "", nil); got != http.StatusServiceUnavailable {
		t.Errorf("list = %d, want 503", got)
	}
}

// A notice starts a run on the task's thread whose hidden input holds the
// task's state, so that the agent tells the user; a thread that is gone
// refuses it.
func TestNotifyMCPTask(t *testing.T) {
	m := modeltest.New(modeltest.Turn{Text: "Your report is ready: 3 pages."})
	e := newEnv(t, envOptions{model: m, gateway: func(o *gateway.Options) {
		rt, err := mcptasks.New(mcptasks.Options{Store: o.Store.(store.MCPTasks), MCP: noMCP{}})
		if err != nil {
			t.Fatal(err)
		}
		o.MCPTasks = rt
	}})
	e.json("POST", "/api/threads", "", map[string]any{"thread_id": "t1"}, 200, nil)
	task := &store.MCPTask{ID: "a", UserID: e.gw.DefaultUserID(), ThreadID: "t1", Toolset: "Report", Server: "srv", RemoteID: "remote-a",
		Status: store.MCPTaskCompleted, Result: json.RawMessage(`{"pages":3}`)}
	if err := e.gw.NotifyMCPTask(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	// The run is recorded by its own goroutine: wait for it (a bound for
	// failure, not a timing assertion).
	var runs []map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		e.json("GET", "/api/threads/t1/runs", "", nil, 200, &runs)
		if len(runs) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(runs) != 1 {
		t.Fatalf("runs = %v", runs)
	}
	e.waitRun("t1", runs[0]["run_id"].(string), "success")
	req := m.LastRequest()
	var input string
	for _, msg := range req.Messages {
		if msg.Role == model.RoleUser {
			input = msg.Text()
		}
	}
	if !strings.Contains(input, "background task") || !strings.Contains(input, `{\"pages\":3}`) && !strings.Contains(input, `"pages":3`) || strings.Contains(input, "remote-a") {
		t.Errorf("the notice run's input = %q", input)
	}
	var state map[string]any
	e.json("GET", "/api/threads/t1/state", "", nil, 200, &state)
	b, _ := json.Marshal(state)
	if !strings.Contains(string(b), `"hide_from_ui":true`) || !strings.Contains(string(b), "Your report is ready") {
		t.Errorf("thread state = %s", b)
	}

	task.ThreadID = "gone"
	if err := e.gw.NotifyMCPTask(t.Context(), task); !errors.Is(err, mcptasks.ErrNoticeRefused) {
		t.Errorf("notice to a missing thread: %v, want ErrNoticeRefused", err)
	}
}
