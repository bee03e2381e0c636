package replicas_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store/postgres/pgtest"
)

// stepsScript makes every run take several steps (four note calls, each
// answer after 20 ms, then a final answer), so that runs are in the
// middle of their checkpoints when their connections are terminated.
// Stateless.
func stepsScript() modeltest.Script {
	step := func(req *model.Request) modeltest.Turn {
		n := 0
		for _, m := range slices.Backward(req.Messages) {
			if m.Role == model.RoleUser {
				break
			}
			if m.Role == model.RoleTool {
				n++
			}
		}
		if n >= 4 {
			return modeltest.Turn{Text: "all steps done", Delay: 20 * time.Millisecond}
		}
		args := json.RawMessage(fmt.Sprintf(`{"text":"step %d"}`, n+1))
		return modeltest.Turn{Delay: 20 * time.Millisecond, ToolCalls: []model.ToolCall{{Name: "note", Arguments: args}}}
	}
	return modeltest.Script{NoRecord: true, ChunkSize: 16, Rules: []modeltest.Rule{{Reply: modeltest.Turn{Func: step}}}}
}

// TestTerminatedBackendsLeaveNoRunRunning is issue 17's acceptance test
// of connection loss on Postgres: two replicas (lease 2 s) keep 48 runs
// in flight, one per thread, each started as the previous one on its
// thread ends, on a private database whose every backend is terminated
// (pg_terminate_backend, 57P01) every 100 ms for 6 s. Writes are
// retried, so most runs complete; a run that fails records its outcome,
// and one whose outcome could not be written is failed by the lease
// sweep. Afterwards, within a bounded wait, no run is pending or running
// without a live lease and no thread is busy without one.
func TestTerminatedBackendsLeaveNoRunRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("terminates database connections for several seconds; skipped with -short")
	}
	const (
		lease    = 2 * time.Second
		inFlight = 48
		window   = 6 * time.Second
	)
	dbURL, dbName := pgtest.Database(t)
	home := t.TempDir()
	m := modeltest.FromScript(stepsScript())
	reps := []*inproc{startInproc(t, dbURL, "", home, m, lease), startInproc(t, dbURL, "", home, m, lease)}
	for i := range inFlight {
		newClient(t, reps[0].url).json("POST", "/api/threads", map[string]any{"thread_id": fmt.Sprintf("t-%d", i)}, 200, nil)
	}

	stop := make(chan struct{})
	var terminated atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { terminateLoop(t, dbName, stop, &terminated) })
	client := &http.Client{Timeout: 60 * time.Second}
	outcomes := map[string]int{}
	var mu sync.Mutex
	var runs sync.WaitGroup
	for i := range inFlight {
		runs.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				outcome := streamOnce(t.Context(), client, reps[i%2].url, fmt.Sprintf("t-%d", i))
				mu.Lock()
				outcomes[outcome]++
				mu.Unlock()
			}
		})
	}
	time.Sleep(window)
	close(stop)
	wg.Wait()
	stopped := time.Now()
	runs.Wait()
	t.Logf("runs: %v; %d backends terminated; the runs in flight ended %v after the terminations stopped",
		outcomes, terminated.Load(), time.Since(stopped).Round(time.Millisecond))
	if terminated.Load() == 0 {
		t.Fatal("no backend was terminated; the test proves nothing")
	}

	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// The sweep runs every lease/2; a lease left by a failed release
	// expires after the lease. 5 leases bound the wait.
	deadline := time.Now().Add(5 * lease)
	for {
		bad, err := unleased(t.Context(), conn)
		if err != nil {
			t.Fatal(err)
		}
		if len(bad) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs or threads still active without a live lease %v after the terminations stopped:\n%s",
				len(bad), 5*lease, strings.Join(bad, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	var total, ended int
	if err := conn.QueryRow(t.Context(), `SELECT count(*), count(*) FILTER (WHERE status NOT IN ('pending', 'running'))
		FROM antler_runs`).Scan(&total, &ended); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d runs recorded, %d ended", total, ended)
}

// terminateLoop terminates every other backend of database db every 100
// ms until stop is closed, counting the terminations.
func terminateLoop(t *testing.T, db string, stop <-chan struct{}, n *atomic.Int64) {
	conn, err := pgx.Connect(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Errorf("terminator: %v", err)
		return
	}
	defer conn.Close(context.Background())
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		var k int64
		err := conn.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
			FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, db).Scan(&k)
		if err != nil {
			t.Errorf("terminator: %v", err)
			return
		}
		n.Add(k)
	}
}

// streamOnce starts a run on thread tid and reads its stream to the end;
// it returns what happened: "completed", "error: <message>", "status N"
// or "transport".
func streamOnce(ctx context.Context, client *http.Client, base, tid string) string {
	body, _ := json.Marshal(runBody("take notes"))
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/langgraph/threads/"+tid+"/runs/stream", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "transport"
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		io.Copy(io.Discard, resp.Body)
		return fmt.Sprint("status ", resp.StatusCode)
	}
	frames, err := readStream(resp.Body)
	if err != nil {
		return "transport"
	}
	for _, f := range frames {
		if f.Event == "error" {
			var e struct{ Message string }
			_ = json.Unmarshal([]byte(f.Data), &e)
			return "error: " + e.Message[:min(len(e.Message), 60)]
		}
	}
	return "completed"
}

// unleased lists the runs that are pending or running and the threads
// that are busy, without a live lease.
func unleased(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, `
		SELECT 'run ' || r.id || ' of thread ' || r.thread_id || ': ' || r.status FROM antler_runs r
		WHERE r.status IN ('pending', 'running')
		  AND NOT EXISTS (SELECT 1 FROM antler_run_leases l WHERE l.run_id = r.id AND l.expires_at > now())
		UNION ALL
		SELECT 'thread ' || t.id || ': ' || t.status FROM antler_threads t
		WHERE t.status = 'busy'
		  AND NOT EXISTS (SELECT 1 FROM antler_run_leases l WHERE l.thread_id = t.id AND l.expires_at > now())`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
