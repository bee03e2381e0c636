package mcptasks_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptasks"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
	"github.com/antlerhq/antler/store/postgres/pgtest"
)

// twoReplicas opens two Postgres stores on one fresh schema, as two
// replicas of a gateway would.
func twoReplicas(t *testing.T) (a, b *postgres.Store) {
	t.Helper()
	url, schema := pgtest.Schema(t)
	open := func() *postgres.Store {
		s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a = open()
	addThreads(t, a)
	return a, open()
}

// Two runtimes on one database, passing at the same moments, poll every
// task exactly once per due poll: never one task twice.
func TestReplicasNeverPollOneTaskTwice(t *testing.T) {
	rs := newReportServer(t)
	m, ext := rs.manager(t)
	c := newClock()
	sa, sb := twoReplicas(t)
	cfg := config.MCPTasks{MaxConcurrentPolls: 3}
	ra, rb := newRuntime(t, sa, m, c, cfg, "A"), newRuntime(t, sb, m, c, cfg, "B")
	sub := submitTool(t, mcptasks.NewSource(m, ext, ra, nil))
	const tasks, rounds = 8, 3
	for i := range tasks {
		submit(t, sub, []string{"t1", "t2"}[i%2])
	}
	for range rounds {
		c.add(5 * time.Second)
		// Each runtime polls at most 3 at once: passes until nothing is
		// due, both runtimes at the same time.
		for range 3 {
			var wg sync.WaitGroup
			for _, rt := range []*mcptasks.Runtime{ra, rb} {
				wg.Go(func() { runOnce(t, rt) })
			}
			wg.Wait()
		}
	}
	polls, _ := rs.counts()
	want := map[string]int{}
	for i := 1; i <= tasks; i++ {
		want["remote-"+itoa(i)] = rounds
	}
	if diff := cmp.Diff(want, polls); diff != "" {
		t.Errorf("status polls per task (-want +got):\n%s", diff)
	}
}

// A runtime that claimed a task and stopped holds it until its lease
// expires; then the other takes it over, and the late answer of the first
// is refused.
func TestReplicaTakesOverAnExpiredLease(t *testing.T) {
	rs := newReportServer(t)
	m, ext := rs.manager(t)
	c := newClock()
	sa, sb := twoReplicas(t)
	cfg := config.MCPTasks{LeaseSeconds: 30}
	ra, rb := newRuntime(t, sa, m, c, cfg, "A"), newRuntime(t, sb, m, c, cfg, "B")
	id := submit(t, submitTool(t, mcptasks.NewSource(m, ext, ra, nil)), "t1")
	c.add(5 * time.Second)
	// A claims the task and dies before asking the server.
	claimed, err := sa.ClaimMCPTasks(t.Context(), store.MCPTaskClaim{Owner: "A", Now: c.now(), Lease: 30 * time.Second, Limit: 8})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim = %v, %v", claimed, err)
	}
	rs.finish("remote-1", "done")
	c.add(29 * time.Second)
	runOnce(t, rb)
	if polls, _ := rs.counts(); polls["remote-1"] != 0 {
		t.Fatal("B polled a task A still held")
	}
	c.add(2 * time.Second)
	runOnce(t, rb)
	task := get(t, sb, id)
	if task.Status != store.MCPTaskCompleted || string(task.Result) != `"done"` {
		t.Fatalf("after B took over: %+v", task)
	}
	if ok, err := sa.FinishMCPTask(t.Context(), id, "A", false, c.now(), store.MCPTaskUpdate{Status: store.MCPTaskFailed}); err != nil || ok {
		t.Errorf("A's late answer: applied %v, %v", ok, err)
	}
}

func itoa(i int) string { return string(rune('0' + i)) }
