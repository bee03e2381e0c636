package replicas_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/scheduler"
)

// schedClock is the dispatchers' shared fake clock.
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

// TestInProcessScheduledTasksAcrossReplicas: two gateways on one
// database, each with its dispatcher polling at the same moments, run
// every firing of every task exactly once, as real runs; the tasks and
// their runs read the same on either replica.
func TestInProcessScheduledTasksAcrossReplicas(t *testing.T) {
	a, b := twoInproc(t)
	t0 := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
	c := &schedClock{now: t0}
	cfg := config.Default().Scheduler
	cfg.MaxConcurrentRuns = 32
	dispatcher := func(r *inproc, owner string) *scheduler.Dispatcher {
		d, err := scheduler.New(scheduler.Options{Tasks: r.store, Runs: r.store, Launcher: r.gw, Config: cfg, Owner: owner, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		r.gw.AttachScheduler(r.store, d)
		t.Cleanup(func() { d.Close() }) // before the replica stops
		return d
	}
	da, db := dispatcher(a, "A"), dispatcher(b, "B")
	ca, cb := newClient(t, a.url), newClient(t, b.url)
	const tasks, rounds = 4, 3
	var ids []string
	for i := range tasks {
		var task map[string]any
		ca.json("POST", "/api/scheduled-tasks", map[string]any{"title": fmt.Sprint("task ", i), "prompt": fmt.Sprint("report ", i),
			"schedule_type": "cron", "schedule_spec": map[string]any{"cron": "* * * * *"}, "timezone": "UTC"}, 200, &task)
		ids = append(ids, task["id"].(string))
	}
	for r := 1; r <= rounds; r++ {
		c.Set(t0.Add(time.Duration(r) * time.Minute))
		var wg sync.WaitGroup
		for _, d := range []*scheduler.Dispatcher{da, db} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := d.RunOnce(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		// Close waits until the outcome of every run it started is
		// recorded; the dispatchers still poll with RunOnce after it.
		da.Close()
		db.Close()
	}
	for _, id := range ids {
		var runs []map[string]any
		cb.json("GET", "/api/scheduled-tasks/"+id+"/runs", nil, 200, &runs)
		if len(runs) != rounds {
			t.Errorf("task %s has %d runs, want %d: %v", id, len(runs), rounds, runs)
			continue
		}
		seen := map[any]bool{}
		for _, run := range runs {
			if run["status"] != "success" || run["trigger"] != "scheduled" || run["run_id"] == nil {
				t.Errorf("task %s: run %v", id, run)
			}
			if seen[run["scheduled_for"]] {
				t.Errorf("task %s: firing %v ran twice", id, run["scheduled_for"])
			}
			seen[run["scheduled_for"]] = true
		}
		var task map[string]any
		ca.json("GET", "/api/scheduled-tasks/"+id, nil, 200, &task)
		if task["run_count"] != float64(rounds) || task["status"] != "enabled" || task["lease_owner"] != nil {
			t.Errorf("task %s = %v", id, task)
		}
	}
}
