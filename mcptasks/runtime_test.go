package mcptasks_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptasks"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/tool"
)

// clock is a settable clock shared by the runtimes of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type taskStore interface {
	store.Store
	store.MCPTasks
}

// openSQLite opens the SQLite store in dir with threads t1 and t2 (once).
func openSQLite(t *testing.T, dir string) taskStore {
	t.Helper()
	s, err := sqlite.OpenDir(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	addThreads(t, s)
	return s
}

func addThreads(t *testing.T, s store.Store) {
	t.Helper()
	for _, id := range []string{"t1", "t2"} {
		if err := s.CreateThread(t.Context(), &store.Thread{ID: id, UserID: "u"}); err != nil && !errors.Is(err, store.ErrExists) {
			t.Fatal(err)
		}
	}
}

func newRuntime(t *testing.T, st store.MCPTasks, m mcptasks.MCP, c *clock, cfg config.MCPTasks, owner string) *mcptasks.Runtime {
	t.Helper()
	rt, err := mcptasks.New(mcptasks.Options{Store: st, MCP: m, Config: cfg, Owner: owner, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// submitTool returns the submit tool rt's source binds (and checks that
// the status and cancel tools are not bound).
func submitTool(t *testing.T, src *mcptasks.Source) *tool.Tool {
	t.Helper()
	tools, err := src.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var submit *tool.Tool
	for _, tl := range tools {
		names = append(names, tl.Name)
		if tl.Name == "reports_submit_report" {
			submit = tl
		}
	}
	if diff := cmp.Diff([]string{"reports_ping", "reports_submit_report"}, names); diff != "" {
		t.Fatalf("bound MCP tools (-want +got):\n%s", diff)
	}
	if !strings.Contains(submit.Description, `durable background task "Quarterly report"`) {
		t.Errorf("submit description = %q", submit.Description)
	}
	return submit
}

// submit calls the submit tool on thread and returns the task id.
func submit(t *testing.T, submit *tool.Tool, thread string) string {
	t.Helper()
	res, err := submit.Handler(t.Context(), &tool.Call{ID: "call-1", RunID: "run-1", ThreadID: thread, UserID: "u"}, json.RawMessage(`{"topic":"sales"}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("submit: %s", res.TextContent())
	}
	var out mcptasks.Submitted
	if err := json.Unmarshal([]byte(res.TextContent()), &out); err != nil {
		t.Fatalf("submit answer %q: %v", res.TextContent(), err)
	}
	if out.TaskName != "Quarterly report" || out.Status != store.MCPTaskSubmitted || !strings.HasPrefix(out.TaskID, "mcp-task-") {
		t.Errorf("submit answer = %+v", out)
	}
	return out.TaskID
}

func runOnce(t *testing.T, rt *mcptasks.Runtime) {
	t.Helper()
	if err := rt.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, st store.MCPTasks, id string) *store.MCPTask {
	t.Helper()
	task, err := st.GetMCPTask(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// A submitted task is stored with the server's id, polled until done,
// and its result stored; a stopped process's tasks are polled by the next.
func TestSubmitPollUntilDone(t *testing.T) {
	rs := newReportServer(t)
	m, ext := rs.manager(t)
	c := newClock()
	dir := t.TempDir()
	st := openSQLite(t, dir)
	rt := newRuntime(t, st, m, c, config.MCPTasks{}, "A")
	id := submit(t, submitTool(t, mcptasks.NewSource(m, ext, rt, nil)), "t1")
	task := get(t, st, id)
	if task.RemoteID != "remote-1" || task.Server != "reports" || task.Toolset != "Quarterly report" || task.RunID != "run-1" || task.ToolCallID != "call-1" {
		t.Fatalf("stored task = %+v", task)
	}

	runOnce(t, rt) // not due yet
	if polls, _ := rs.counts(); polls["remote-1"] != 0 {
		t.Fatalf("polled before poll_interval_seconds: %d", polls["remote-1"])
	}
	c.add(5 * time.Second)
	runOnce(t, rt)
	if task := get(t, st, id); task.Status != store.MCPTaskWorking || !task.NextPollAt.Equal(c.now().Add(5*time.Second)) {
		t.Fatalf("after the first poll: status %s, next poll %v", task.Status, task.NextPollAt)
	}

	// The process stops; the task is finished meanwhile; the next
	// process, on the same database, polls it to the end.
	st.Close()
	rs.finish("remote-1", map[string]any{"pages": 3})
	st2 := openSQLite(t, dir)
	rt2 := newRuntime(t, st2, m, c, config.MCPTasks{}, "B")
	c.add(5 * time.Second)
	runOnce(t, rt2)
	task = get(t, st2, id)
	if task.Status != store.MCPTaskCompleted || string(task.Result) != `{"pages":3}` || !task.NextPollAt.IsZero() {
		t.Fatalf("after completion: %+v", task)
	}
	c.add(time.Hour)
	runOnce(t, rt2)
	if polls, _ := rs.counts(); polls["remote-1"] != 2 {
		t.Errorf("status polls = %d, want 2 (none after completion)", polls["remote-1"])
	}
}

// Cancellation asked through the runtime reaches the server on the next
// pass; another thread cannot cancel the task.
func TestCancel(t *testing.T) {
	rs := newReportServer(t)
	m, ext := rs.manager(t)
	c := newClock()
	st := openSQLite(t, t.TempDir())
	rt := newRuntime(t, st, m, c, config.MCPTasks{}, "A")
	sub := submitTool(t, mcptasks.NewSource(m, ext, rt, nil))
	id := submit(t, sub, "t1")
	var me *mcptasks.MatchError
	if _, err := rt.Cancel(t.Context(), "u", "t2", ""); !errors.As(err, &me) {
		t.Fatalf("cancel from another thread: %v", err)
	}
	if _, err := rt.Cancel(t.Context(), "u", "t1", "no such report"); !errors.As(err, &me) {
		t.Fatalf("cancel of an unknown name: %v", err)
	}
	asked, err := rt.Cancel(t.Context(), "u", "t1", "quarterly REPORT")
	if err != nil || asked.ID != id || asked.CancelRequestedAt.IsZero() {
		t.Fatalf("Cancel = %+v, %v", asked, err)
	}
	runOnce(t, rt)
	if _, cancels := rs.counts(); cancels["remote-1"] != 1 {
		t.Fatalf("cancel calls = %v", cancels)
	}
	if task := get(t, st, id); task.Status != store.MCPTaskCancelled {
		t.Errorf("status = %s, want cancelled", task.Status)
	}
	// Two active tasks: naming none is ambiguous.
	submit(t, sub, "t1")
	submit(t, sub, "t1")
	if _, err := rt.Cancel(t.Context(), "u", "t1", ""); !errors.As(err, &me) || !strings.Contains(me.Msg, "More than one") {
		t.Errorf("ambiguous cancel: %v", err)
	}
}

// A result over max_result_bytes keeps only its preview; a server that
// refuses the arguments is an error the model reads.
func TestBounds(t *testing.T) {
	rs := newReportServer(t)
	m, ext := rs.manager(t)
	c := newClock()
	st := openSQLite(t, t.TempDir())
	rt := newRuntime(t, st, m, c, config.MCPTasks{MaxResultBytes: 1024, ResultPreviewMaxChars: 64}, "A")
	sub := submitTool(t, mcptasks.NewSource(m, ext, rt, nil))
	id := submit(t, sub, "t1")
	rs.finish("remote-1", strings.Repeat("é", 2000))
	c.add(5 * time.Second)
	runOnce(t, rt)
	task := get(t, st, id)
	if task.Result != nil || !task.ResultTruncated || task.ResultPreview != strings.Repeat("é", 64) {
		t.Errorf("large result: result %d bytes, truncated %v, preview %q", len(task.Result), task.ResultTruncated, task.ResultPreview)
	}

	res, err := sub.Handler(t.Context(), &tool.Call{ThreadID: "t1", UserID: "u"}, json.RawMessage(`{"topic":"refuse"}`))
	if err != nil || !res.IsError || !strings.Contains(res.TextContent(), "topic not allowed") {
		t.Errorf("refused submit = %+v, %v", res, err)
	}
	// A task whose id cannot be stored is cancelled, not left untracked.
	res, err = sub.Handler(t.Context(), &tool.Call{ThreadID: "t1", UserID: "u"}, json.RawMessage(`{"topic":"long id"}`))
	if err != nil || !res.IsError || !strings.Contains(res.TextContent(), "longer than 255") {
		t.Errorf("submit with a long remote id = %+v, %v", res, err)
	}
	if _, cancels := rs.counts(); cancels[strings.Repeat("x", 300)] != 1 {
		t.Errorf("the untracked remote task was not cancelled: %v", cancels)
	}
	for range mcptasks.MaxActivePerThread {
		submit(t, sub, "t2")
	}
	res, err = sub.Handler(t.Context(), &tool.Call{ThreadID: "t2", UserID: "u"}, json.RawMessage(`{"topic":"one more"}`))
	if err != nil || !res.IsError || !strings.Contains(res.TextContent(), "active background tasks") {
		t.Errorf("submit beyond the bound = %+v, %v", res, err)
	}
}

// Without the runtime (mcp_tasks disabled) a toolset is never bound as
// plain tools.
func TestSourceWithoutRuntime(t *testing.T) {
	rs := newReportServer(t)
	m, ext := rs.manager(t)
	tools, err := mcptasks.NewSource(m, ext, nil, nil).Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "reports_ping" {
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
		t.Errorf("tools = %v, want only reports_ping", names)
	}
}
