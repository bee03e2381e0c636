package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
)

// TestServeFiresDueScheduledTask: with scheduler.enabled, `antler serve`
// fires a task that is already due when it starts (its first poll runs
// at start), on a new thread of the task's owner, and records the
// outcome; the routes serve the task and its run.
func TestServeFiresDueScheduledTask(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{Text: "scheduled hello"})
	cfg, home := e2eConfig(t, srv.URL)
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("scheduler: {enabled: true, poll_interval_seconds: 300}\n")
	f.Close()

	st, err := sqlite.OpenDir(home, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	due := time.Now().UTC().Add(-time.Minute).Truncate(time.Microsecond)
	if err := st.CreateScheduledTask(t.Context(), &store.ScheduledTask{ID: "task-due", UserID: "default",
		ContextMode: "fresh_thread_per_run", AssistantID: "lead_agent", Title: "due", Prompt: "say hello",
		ScheduleType: "once", ScheduleSpec: map[string]any{"run_at": due.Format(time.RFC3339)}, Timezone: "UTC",
		Status: store.TaskEnabled, OverlapPolicy: "skip", NextRunAt: due}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	url, stop := startServe(t, nil, "--config", cfg, "--home", home)
	defer stop()
	// The run is asynchronous: wait for its recorded outcome (a bound
	// for failure, not a timing assertion).
	var task map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/api/scheduled-tasks/task-due")
		if err != nil {
			t.Fatal(err)
		}
		task = map[string]any{}
		json.NewDecoder(resp.Body).Decode(&task)
		resp.Body.Close()
		if task["status"] != "enabled" && task["status"] != "running" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if task["status"] != "completed" || task["run_count"] != 1.0 {
		t.Fatalf("task = %v", task)
	}
	resp, err := http.Get(url + "/api/threads/" + task["last_thread_id"].(string) + "/state")
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	json.NewDecoder(resp.Body).Decode(&state)
	resp.Body.Close()
	if b, _ := json.Marshal(state); !strings.Contains(string(b), "scheduled hello") {
		t.Errorf("the scheduled run's thread = %s", b)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exit = %d", code)
	}
}

// TestServeSchedulerMultiInstanceNeedsPostgres: multi_instance on the
// SQLite backend is a config error (exit 2), as in DeerFlow.
func TestServeSchedulerMultiInstanceNeedsPostgres(t *testing.T) {
	cfg, home := e2eConfig(t, "http://127.0.0.1:1")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("scheduler: {enabled: true, multi_instance: true}\n")
	f.Close()
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "serve", "--addr", "127.0.0.1:0")
	if code != 2 || !strings.Contains(errOut, "scheduler.multi_instance") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
