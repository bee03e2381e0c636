package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/antlerhq/antler/scheduler"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
	"github.com/antlerhq/antler/store/postgres/pgtest"
)

// firings counts the runs started per task and firing time, across
// every dispatcher.
type firings struct {
	mu sync.Mutex
	n  map[string]int
}

func (f *firings) add(key string) {
	f.mu.Lock()
	f.n[key]++
	f.mu.Unlock()
}

// raceDispatchers runs two dispatchers, each on its own connection to
// one database, polling at the same moments of a fake clock: every
// firing of every task runs exactly once.
func raceDispatchers(t *testing.T, a, b testStore) {
	const tasks, rounds = 8, 5
	for i := range tasks {
		create(t, a, cronTask(fmt.Sprintf("t%d", i), "* * * * *", t0))
	}
	c := &clock{now: t0}
	f := &firings{n: map[string]int{}}
	end := func(r scheduler.LaunchRequest) (string, string) {
		f.add(fmt.Sprintf("%s@%s", r.Metadata["scheduled_task_id"], c.Now().Format(time.TimeOnly)))
		return store.RunSuccess, ""
	}
	da := newDispatcher(t, a, &launcher{st: a, end: end, prefix: "a-"}, c, 32, "A")
	db := newDispatcher(t, b, &launcher{st: b, end: end, prefix: "b-"}, c, 32, "B")
	for r := range rounds {
		c.Set(t0.Add(time.Duration(r) * time.Minute))
		var wg sync.WaitGroup
		for _, d := range []*scheduler.Dispatcher{da, db} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := d.RunOnce(context.WithoutCancel(t.Context())); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		da.WaitWatches()
		db.WaitWatches()
	}
	for i := range tasks {
		for r := range rounds {
			key := fmt.Sprintf("t%d@%s", i, t0.Add(time.Duration(r)*time.Minute).Format(time.TimeOnly))
			if n := f.n[key]; n != 1 {
				t.Errorf("firing %s ran %d times, want 1", key, n)
			}
		}
		runs := runsOf(t, a, fmt.Sprintf("t%d", i))
		for _, x := range runs {
			if x.Status != store.TaskRunSuccess {
				t.Errorf("task run %+v, want success", x)
			}
		}
		if len(runs) != rounds {
			t.Errorf("task t%d has %d runs, want %d", i, len(runs), rounds)
		}
	}
	if len(f.n) != tasks*rounds {
		t.Errorf("%d firings, want %d", len(f.n), tasks*rounds)
	}
}

func TestTwoDispatchersOneDatabase_SQLite(t *testing.T) {
	dir := t.TempDir()
	raceDispatchers(t, openSQLite(t, dir), openSQLite(t, dir))
}

func TestTwoDispatchersOneDatabase_Postgres(t *testing.T) {
	url, schema := pgtest.Schema(t)
	open := func() testStore {
		s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	raceDispatchers(t, open(), open())
}
