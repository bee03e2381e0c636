package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
	"github.com/antlerhq/antler/store/postgres/pgtest"
)

// TestRunOnPostgres_killedRunIsFailedByTheLeaseSweep: `antler run` on
// the Postgres backend holds its thread's run lease and records the run
// as its own, so when the process is killed mid-run the lease sweep of
// any process fails the run and frees the thread; before, such a run
// had no owner and no lease and stayed running for ever.
func TestRunOnPostgres_killedRunIsFailedByTheLeaseSweep(t *testing.T) {
	url, schema := pgtest.Schema(t)
	srv := modeltest.NewServer(t, modeltest.Turn{Text: "too late", Delay: time.Minute})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", fmt.Sprintf(`models:
  - name: test
    use: langchain_openai:ChatOpenAI
    model: scripted
    api_key: modeltest
    base_url: %s
database:
  backend: postgres
  postgres_url: %s
  postgres_schema: %s
  run_lease_seconds: 2
`, srv.URL, url, schema))
	cmd := antlerCmd(t, "--config", cfg, "--home", filepath.Join(dir, "home"), "run", "--thread", "t1", "hello")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	st, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := waitForRun(ctx, t, st, "t1", store.RunRunning)
	leases := postgres.NewLeases(st, postgres.LeaseOptions{TTL: 2 * time.Second})
	defer leases.Close()
	if lease, held, err := leases.Get(ctx, "t1"); err != nil || !held || lease.RunID != run.ID {
		t.Fatalf("while the run streams: lease %+v held %v err %v; want the run's lease", lease, held, err)
	}

	_ = cmd.Process.Kill() // SIGKILL: nothing of the run's is written after this
	_ = cmd.Wait()
	for {
		if _, err := leases.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := st.GetRun(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != store.RunRunning && got.Status != store.RunPending {
			if got.Status != store.RunError || got.Error == "" {
				t.Errorf("swept run: status %q, error %q; want error with a reason", got.Status, got.Error)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the killed CLI run is still running a minute later: no lease sweep fails it")
		}
		time.Sleep(200 * time.Millisecond)
	}
	th, err := st.GetThread(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if th.Status == store.ThreadBusy {
		t.Error("the thread of the swept run is still busy")
	}
}

// waitForRun waits until thread has a run of the given status.
func waitForRun(ctx context.Context, t *testing.T, st store.Store, thread string, status string) *store.Run {
	t.Helper()
	for {
		runs, err := st.ListRuns(ctx, thread)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Status == status {
				return r
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("no %s run on thread %s", status, thread)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
