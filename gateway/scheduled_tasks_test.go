package gateway_test

import (
	"context"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/scheduler"
	"github.com/antlerhq/antler/store"
)

// schedClock is the dispatcher's fake clock.
type schedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *schedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *schedClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// gatedModel answers "hello" once gate is closed.
type gatedModel struct {
	gate  chan struct{}
	inner model.ChatModel
}

func (g *gatedModel) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		select {
		case <-g.gate:
		case <-ctx.Done():
			yield(model.Event{}, ctx.Err())
			return
		}
		for ev, err := range g.inner.Generate(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

var schedT0 = time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)

// schedEnv is a gateway with scheduled tasks on its SQLite store and a
// dispatcher on a fake clock (not started: tests poll with RunOnce).
func schedEnv(t *testing.T, o envOptions) (*env, *scheduler.Dispatcher, *schedClock) {
	t.Helper()
	e := newEnv(t, o)
	c := &schedClock{now: schedT0}
	d, err := scheduler.New(scheduler.Options{Tasks: e.store, Runs: e.store, Launcher: e.gw,
		Config: config.Default().Scheduler, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	e.gw.AttachScheduler(e.store, d)
	t.Cleanup(func() { d.Close() })
	return e, d, c
}

func taskKeys(m map[string]any) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestScheduledTasks_lifecycle goes through every route as the
// frontend does: create, list (all and by thread), update, pause,
// resume, trigger, a scheduled firing, runs, delete.
func TestScheduledTasks_lifecycle(t *testing.T) {
	e, d, c := schedEnv(t, envOptions{model: modeltest.New(modeltest.Turn{Text: "hello"}, modeltest.Turn{Text: "hello"})})
	var task map[string]any
	e.json("POST", "/api/scheduled-tasks", "", map[string]any{"context_mode": "fresh_thread_per_run", "title": "Morning brief",
		"prompt": "Summarise the news", "schedule_type": "cron", "schedule_spec": map[string]any{"cron": " 0  9 * * * "},
		"timezone": "Asia/Shanghai"}, http.StatusOK, &task)
	wantKeys := []string{"assistant_id", "context_mode", "created_at", "id", "last_error", "last_run_at", "last_run_id", "last_thread_id",
		"lease_expires_at", "lease_owner", "next_run_at", "overlap_policy", "prompt", "run_count", "schedule_spec", "schedule_type",
		"status", "thread_id", "timezone", "title", "updated_at", "user_id"}
	if diff := cmp.Diff(wantKeys, taskKeys(task)); diff != "" {
		t.Errorf("task keys (-want +got):\n%s", diff)
	}
	id, _ := task["id"].(string)
	if !strings.HasPrefix(id, "task-") || task["status"] != "enabled" || task["next_run_at"] != "2026-03-08T01:00:00Z" ||
		task["thread_id"] != nil || task["run_count"] != 0.0 || task["user_id"] != "default" {
		t.Errorf("created task = %v", task)
	}
	if spec, _ := task["schedule_spec"].(map[string]any); spec["cron"] != "0 9 * * *" {
		t.Errorf("cron not normalised: %v", spec)
	}

	var list []map[string]any
	e.json("GET", "/api/scheduled-tasks", "", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0]["id"] != id {
		t.Errorf("list = %v", list)
	}
	e.json("GET", "/api/threads/some-thread/scheduled-tasks", "", nil, http.StatusOK, &list)
	if len(list) != 0 {
		t.Errorf("thread list = %v", list)
	}

	e.json("PATCH", "/api/scheduled-tasks/"+id, "", map[string]any{"title": "Evening brief", "schedule_spec": map[string]any{"cron": "0 20 * * *"},
		"timezone": "UTC"}, http.StatusOK, &task)
	if task["title"] != "Evening brief" || task["next_run_at"] != "2026-03-07T20:00:00Z" || task["prompt"] != "Summarise the news" {
		t.Errorf("updated task = %v", task)
	}
	e.json("POST", "/api/scheduled-tasks/"+id+"/pause", "", nil, http.StatusOK, &task)
	if task["status"] != "paused" {
		t.Errorf("paused = %v", task["status"])
	}
	// A paused task does not fire.
	c.Set(schedT0.Add(8*time.Hour + time.Second))
	if err := d.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.json("GET", "/api/scheduled-tasks/"+id+"/runs", "", nil, http.StatusOK, &list)
	if len(list) != 0 {
		t.Fatalf("a paused task fired: %v", list)
	}
	e.json("POST", "/api/scheduled-tasks/"+id+"/resume", "", nil, http.StatusOK, &task)
	if task["status"] != "enabled" {
		t.Errorf("resumed = %v", task["status"])
	}
	// The firing due at 20:00, then a manual trigger.
	if err := d.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	d.Close() // waits until the run's outcome is recorded
	c.Set(schedT0.Add(8*time.Hour + 30*time.Minute))
	var trig map[string]any
	e.json("POST", "/api/scheduled-tasks/"+id+"/trigger", "", nil, http.StatusOK, &trig)
	if diff := cmp.Diff(map[string]any{"id": id, "triggered": true}, trig); diff != "" {
		t.Errorf("trigger (-want +got):\n%s", diff)
	}
	d.Close()
	var runs []map[string]any
	e.json("GET", "/api/scheduled-tasks/"+id+"/runs", "", nil, http.StatusOK, &runs)
	if len(runs) != 2 {
		t.Fatalf("runs = %v", runs)
	}
	if runs[0]["trigger"] != "manual" || runs[1]["trigger"] != "scheduled" {
		t.Errorf("runs' triggers = %v, %v", runs[0]["trigger"], runs[1]["trigger"])
	}
	for _, r := range runs {
		if r["status"] != "success" || r["run_id"] == nil || r["finished_at"] == nil || r["error"] != nil {
			t.Errorf("run = %v", r)
		}
	}
	// The scheduled run ran on a new thread of the task's owner, with the
	// prompt as its input.
	e.json("GET", "/api/scheduled-tasks/"+id, "", nil, http.StatusOK, &task)
	tid, _ := task["last_thread_id"].(string)
	if task["run_count"] != 2.0 || tid == "" || task["next_run_at"] != "2026-03-08T20:00:00Z" || task["status"] != "enabled" {
		t.Errorf("task after runs = %v", task)
	}
	st, err := e.store.LatestCheckpoint(t.Context(), tid)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.State.Messages) < 2 || st.State.Messages[0].Content != "Summarise the news" || st.State.Messages[1].Content != "hello" {
		t.Errorf("the run's messages = %+v", st.State.Messages)
	}
	if r, err := e.store.GetRun(t.Context(), task["last_run_id"].(string)); err != nil || r.UserID != "default" || r.Status != store.RunSuccess {
		t.Errorf("run = %+v, %v", r, err)
	}

	var del map[string]any
	e.json("DELETE", "/api/scheduled-tasks/"+id, "", nil, http.StatusOK, &del)
	if diff := cmp.Diff(map[string]any{"id": id, "deleted": true}, del); diff != "" {
		t.Errorf("delete (-want +got):\n%s", diff)
	}
	if got := e.status("GET", "/api/scheduled-tasks/"+id, "", nil); got != http.StatusNotFound {
		t.Errorf("deleted task: status %d", got)
	}
	if got := e.status("DELETE", "/api/scheduled-tasks/"+id, "", nil); got != http.StatusNotFound {
		t.Errorf("second delete: status %d", got)
	}
}

// TestScheduledTasks_reuseThread: a reuse_thread task needs its owner's
// existing thread, runs there, and is listed under it.
func TestScheduledTasks_reuseThread(t *testing.T) {
	e, d, _ := schedEnv(t, envOptions{})
	body := map[string]any{"context_mode": "reuse_thread", "thread_id": "chat-1", "title": "t", "prompt": "p",
		"schedule_type": "cron", "schedule_spec": map[string]any{"cron": "0 9 * * *"}, "timezone": "UTC"}
	if got := e.status("POST", "/api/scheduled-tasks", "", body); got != http.StatusNotFound {
		t.Fatalf("unknown thread: status %d, want 404", got)
	}
	if err := e.store.CreateThread(t.Context(), &store.Thread{ID: "chat-1", UserID: "default"}); err != nil {
		t.Fatal(err)
	}
	var task map[string]any
	e.json("POST", "/api/scheduled-tasks", "", body, http.StatusOK, &task)
	var list []map[string]any
	e.json("GET", "/api/threads/chat-1/scheduled-tasks", "", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0]["thread_id"] != "chat-1" {
		t.Fatalf("thread's tasks = %v", list)
	}
	e.json("POST", "/api/scheduled-tasks/"+task["id"].(string)+"/trigger", "", nil, http.StatusOK, nil)
	d.Close()
	runs, err := e.store.ListRuns(t.Context(), "chat-1")
	if err != nil || len(runs) != 1 || runs[0].Status != store.RunSuccess {
		t.Fatalf("runs of the thread = %v, %v", runs, err)
	}
	// Back to a new thread per run: the thread is dropped.
	e.json("PATCH", "/api/scheduled-tasks/"+task["id"].(string), "", map[string]any{"context_mode": "fresh_thread_per_run"}, http.StatusOK, &task)
	if task["thread_id"] != nil {
		t.Errorf("thread_id = %v", task["thread_id"])
	}
}

// TestScheduledTasks_triggerConflict: a second trigger while the first
// run goes on answers 409, and so does changing the running once task.
func TestScheduledTasks_triggerConflict(t *testing.T) {
	gate := make(chan struct{})
	e, d, _ := schedEnv(t, envOptions{model: &gatedModel{gate: gate, inner: modeltest.New(modeltest.Turn{Text: "hello"})}})
	var task map[string]any
	e.json("POST", "/api/scheduled-tasks", "", map[string]any{"title": "t", "prompt": "p", "schedule_type": "once",
		"schedule_spec": map[string]any{"run_at": "2026-03-07T13:00:00"}, "timezone": "UTC"}, http.StatusOK, &task)
	id := task["id"].(string)
	e.json("POST", "/api/scheduled-tasks/"+id+"/trigger", "", nil, http.StatusOK, nil)
	resp := e.do("POST", "/api/scheduled-tasks/"+id+"/trigger", "", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("second trigger: status %d, want 409", resp.StatusCode)
	}
	// A once task is running until its run ends.
	if got := e.status("PATCH", "/api/scheduled-tasks/"+id, "", map[string]any{"title": "x"}); got != http.StatusConflict {
		t.Errorf("update of a running task: status %d, want 409", got)
	}
	if got := e.status("POST", "/api/scheduled-tasks/"+id+"/pause", "", nil); got != http.StatusConflict {
		t.Errorf("pause of a running task: status %d, want 409", got)
	}
	close(gate)
	d.Close()
	e.json("GET", "/api/scheduled-tasks/"+id, "", nil, http.StatusOK, &task)
	if task["status"] != "completed" {
		t.Errorf("once task after its run = %v", task["status"])
	}
}

// TestScheduledTasks_validation: DeerFlow's status codes for bad input.
func TestScheduledTasks_validation(t *testing.T) {
	e, _, _ := schedEnv(t, envOptions{})
	valid := func(change map[string]any) map[string]any {
		b := map[string]any{"title": "t", "prompt": "p", "schedule_type": "cron", "schedule_spec": map[string]any{"cron": "0 9 * * *"}, "timezone": "UTC"}
		for k, v := range change {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		detail string
	}{
		{"unsupported schedule type", valid(map[string]any{"schedule_type": "interval"}), 422, "Unsupported schedule_type"},
		{"unsupported context mode", valid(map[string]any{"context_mode": "shared"}), 422, "Unsupported context_mode"},
		{"missing title", valid(map[string]any{"title": nil}), 422, "body.title: Field required"},
		{"empty prompt", valid(map[string]any{"prompt": ""}), 422, "body.prompt"},
		{"unknown timezone", valid(map[string]any{"timezone": "Mars/Base"}), 422, "Unknown timezone: Mars/Base"},
		{"four cron fields", valid(map[string]any{"schedule_spec": map[string]any{"cron": "0 9 * *"}}), 422, "Cron expression must contain exactly 5 fields"},
		{"cron missing", valid(map[string]any{"schedule_spec": map[string]any{}}), 422, "cron schedule requires schedule_spec.cron"},
		{"once in the past", valid(map[string]any{"schedule_type": "once", "schedule_spec": map[string]any{"run_at": "2026-03-07T11:00:00Z"}}), 422, "once schedule must be in the future"},
		{"once too soon", valid(map[string]any{"schedule_type": "once", "schedule_spec": map[string]any{"run_at": "2026-03-07T12:00:30Z"}}), 422, "at least 60 seconds in the future"},
		{"reuse without thread", valid(map[string]any{"context_mode": "reuse_thread"}), 422, "reuse_thread requires thread_id"},
		{"bad thread id", valid(map[string]any{"thread_id": "../x"}), 422, "body.thread_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out map[string]any
			e.json("POST", "/api/scheduled-tasks", "", tc.body, tc.status, &out)
			if d, _ := out["detail"].(string); !strings.Contains(d, tc.detail) {
				t.Errorf("detail = %q, want %q", d, tc.detail)
			}
		})
	}
	var task map[string]any
	e.json("POST", "/api/scheduled-tasks", "", valid(nil), http.StatusOK, &task)
	id := task["id"].(string)
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"runs limit zero", "GET", "/api/scheduled-tasks/" + id + "/runs?limit=0", nil, 422},
		{"runs limit too large", "GET", "/api/scheduled-tasks/" + id + "/runs?limit=201", nil, 422},
		{"runs negative offset", "GET", "/api/scheduled-tasks/" + id + "/runs?offset=-1", nil, 422},
		{"patch bad cron", "PATCH", "/api/scheduled-tasks/" + id, map[string]any{"schedule_spec": map[string]any{"cron": "bad"}}, 422},
		{"patch empty title", "PATCH", "/api/scheduled-tasks/" + id, map[string]any{"title": ""}, 422},
		{"unknown task", "POST", "/api/scheduled-tasks/task-none/pause", nil, 404},
		{"unknown task runs", "GET", "/api/scheduled-tasks/task-none/runs", nil, 404},
		{"unknown task trigger", "POST", "/api/scheduled-tasks/task-none/trigger", nil, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.status(tc.method, tc.path, "", tc.body); got != tc.status {
				t.Errorf("status %d, want %d", got, tc.status)
			}
		})
	}
}

// TestScheduledTasks_ownUserOnly: another user's task is not found, and
// is not listed.
func TestScheduledTasks_ownUserOnly(t *testing.T) {
	e, _, _ := schedEnv(t, envOptions{tokens: []config.GatewayToken{{Token: "tok-a", UserID: "alice"}, {Token: "tok-b", UserID: "bob"}}})
	var task map[string]any
	e.json("POST", "/api/scheduled-tasks", "tok-a", map[string]any{"title": "t", "prompt": "p", "schedule_type": "cron",
		"schedule_spec": map[string]any{"cron": "0 9 * * *"}, "timezone": "UTC"}, http.StatusOK, &task)
	id := task["id"].(string)
	for _, p := range []struct{ method, path string }{{"GET", ""}, {"PATCH", ""}, {"DELETE", ""}, {"POST", "/pause"}, {"POST", "/trigger"}, {"GET", "/runs"}} {
		if got := e.status(p.method, "/api/scheduled-tasks/"+id+p.path, "tok-b", map[string]any{}); got != http.StatusNotFound {
			t.Errorf("bob %s %s: status %d, want 404", p.method, p.path, got)
		}
	}
	var list []map[string]any
	e.json("GET", "/api/scheduled-tasks", "tok-b", nil, http.StatusOK, &list)
	if len(list) != 0 {
		t.Errorf("bob lists %v", list)
	}
}

// TestScheduledTasks_unavailable: without AttachScheduler the routes
// answer 503, as DeerFlow's do without their repositories.
func TestScheduledTasks_unavailable(t *testing.T) {
	e := newEnv(t, envOptions{})
	if got := e.status("GET", "/api/scheduled-tasks", "", nil); got != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", got)
	}
}

// TestScheduledTasks_busyThreadSkips: a firing on a thread whose run is
// still going (another task's, on the same thread) is recorded as
// skipped, and the task stays enabled for its next firing.
func TestScheduledTasks_busyThreadSkips(t *testing.T) {
	gate := make(chan struct{})
	e, d, c := schedEnv(t, envOptions{model: &gatedModel{gate: gate, inner: modeltest.New(modeltest.Turn{Text: "hello"})}})
	if err := e.store.CreateThread(t.Context(), &store.Thread{ID: "chat-1", UserID: "default"}); err != nil {
		t.Fatal(err)
	}
	create := func(title, cron string) string {
		var task map[string]any
		e.json("POST", "/api/scheduled-tasks", "", map[string]any{"context_mode": "reuse_thread", "thread_id": "chat-1", "title": title,
			"prompt": "p", "schedule_type": "cron", "schedule_spec": map[string]any{"cron": cron}, "timezone": "UTC"}, http.StatusOK, &task)
		return task["id"].(string)
	}
	holder, due := create("holder", "0 0 1 1 *"), create("due", "5 12 * * *")
	e.json("POST", "/api/scheduled-tasks/"+holder+"/trigger", "", nil, http.StatusOK, nil)
	c.Set(schedT0.Add(5 * time.Minute))
	if err := d.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	var runs []map[string]any
	e.json("GET", "/api/scheduled-tasks/"+due+"/runs", "", nil, http.StatusOK, &runs)
	if len(runs) != 1 || runs[0]["status"] != "skipped" || !strings.Contains(runs[0]["error"].(string), "already has an active run") {
		t.Fatalf("runs = %v", runs)
	}
	var task map[string]any
	e.json("GET", "/api/scheduled-tasks/"+due, "", nil, http.StatusOK, &task)
	if task["status"] != "enabled" || task["next_run_at"] != "2026-03-08T12:05:00Z" || task["run_count"] != 0.0 {
		t.Errorf("task = %v", task)
	}
	close(gate)
	d.Close()
}
