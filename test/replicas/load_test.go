package replicas_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store/postgres/pgtest"
)

// loadScript: a tool call (ls), then a streamed answer. Stateless.
func loadScript() modeltest.Script {
	ls := model.ToolCall{Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt/user-data"}`)}
	return modeltest.Script{ChunkSize: 8, NoRecord: true, Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Reply: modeltest.Turn{ToolCalls: []model.ToolCall{ls}}},
		{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: "The folder is listed; every frame of this answer counts."}},
	}}
}

// startReplicas starts n `antler serve` processes on one fresh schema
// (n = 0: one process on SQLite, schema "").
func startReplicas(t *testing.T, n int, script modeltest.Script) (procs []*proc, schema string) {
	t.Helper()
	m := modeltest.NewScriptServer(t, script)
	cfg := sqliteConfig(m.URL)
	if n > 0 {
		_, schema = pgtest.Schema(t)
		cfg = procConfig(m.URL, schema, 30)
	}
	home := t.TempDir()
	cfgPath := filepath.Join(home, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "extensions_config.json"), []byte(`{"mcpServers": {}, "skills": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range max(n, 1) {
		procs = append(procs, startProc(t, fmt.Sprint("R", i), cfgPath, home))
	}
	return procs, schema
}

type loadResult struct {
	runs     int
	wall     time.Duration
	p50, p99 time.Duration
	frames   int
}

// TestLoadReplicas streams 200 concurrent runs over loopback, spread
// round-robin over 2 replicas (and, for the baseline, all on 1), and
// checks that there are 0 errors and 0 lost events: every stream has
// frames 1..N without a gap and an end frame, every final state holds
// the 4 messages, every relayed copy in Postgres has the same N frames,
// and a quarter of the runs, followed from the other replica, deliver
// the very same bytes. Figures: docs/benchmarks.md ("Scale-out").
func TestLoadReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("load test skipped with -short")
	}
	const runs = 200
	antlerBinary(t) // build outside the timings
	for _, tc := range []struct {
		name     string
		replicas int
	}{
		{"1 process on SQLite", 0},
		{"1 replica on Postgres", 1},
		{"2 replicas on Postgres", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			procs, schema := startReplicas(t, tc.replicas, loadScript())
			r := loadRuns(t, procs, schema, runs)
			t.Logf("%s, %d concurrent runs: wall %v, %.0f runs/s, p50 %v, p99 %v, %d frames",
				tc.name, r.runs, r.wall.Round(time.Millisecond), float64(r.runs)/r.wall.Seconds(),
				r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond), r.frames)
		})
	}
}

func loadRuns(t *testing.T, procs []*proc, schema string, runs int) loadResult {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: runs, MaxConnsPerHost: runs}, Timeout: 60 * time.Second}
	defer client.CloseIdleConnections()
	durations := make([]time.Duration, runs)
	errs := make([]error, runs)
	received := make([][]frame, runs)
	runIDs := make([]string, runs)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range runs {
		wg.Go(func() {
			<-start
			t0 := time.Now()
			origin := procs[i%len(procs)]
			follow := (*proc)(nil)
			if len(procs) > 1 && i%4 == 0 {
				follow = procs[(i+1)%len(procs)]
			}
			runIDs[i], received[i], errs[i] = oneRun(t.Context(), client, origin, follow, fmt.Sprintf("load-%d", i))
			durations[i] = time.Since(t0)
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	wall := time.Since(t0)
	failed := 0
	total := 0
	for i, err := range errs {
		total += len(received[i])
		if err != nil {
			failed++
			if failed <= 10 {
				t.Errorf("run %d: %v", i, err)
			}
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d runs failed", failed, runs)
	}
	if schema != "" {
		checkRelayed(t, schema, runIDs, received)
	}
	slices.Sort(durations)
	return loadResult{runs: runs, wall: wall, p50: durations[runs/2], p99: durations[runs*99/100], frames: total}
}

// oneRun streams one run on a new thread through origin; with follow
// set, it also follows the run from that replica and compares the bytes.
func oneRun(ctx context.Context, client *http.Client, origin, follow *proc, tid string) (string, []frame, error) {
	body, _ := json.Marshal(runBody("list the folder"))
	req, _ := http.NewRequestWithContext(ctx, "POST", origin.url+"/api/langgraph/threads/"+tid+"/runs/stream", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return "", nil, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	rid := runIDOf(resp)
	s := newSSE(resp.Body)
	first, err := s.next()
	if err != nil {
		return rid, nil, err
	}
	var followed chan []frame
	var followErr error
	if follow != nil {
		followed = make(chan []frame, 1)
		go func() {
			jreq, _ := http.NewRequestWithContext(ctx, "GET", follow.url+"/api/threads/"+tid+"/runs/"+rid+"/stream", nil)
			jresp, err := client.Do(jreq)
			if err != nil {
				followErr = err
				followed <- nil
				return
			}
			defer jresp.Body.Close()
			if jresp.StatusCode != 200 {
				followErr = fmt.Errorf("follow on %s: status %d", follow.name, jresp.StatusCode)
				followed <- nil
				return
			}
			fs, err := readStream(jresp.Body)
			followErr = err
			followed <- fs
		}()
	}
	rest, err := readStream(s.r)
	frames := append([]frame{first}, rest...)
	if err != nil {
		return rid, frames, err
	}
	if err := checkFrames(frames, 1); err != nil {
		return rid, frames, err
	}
	for _, f := range frames {
		if f.Event == "error" {
			return rid, frames, fmt.Errorf("error frame %s", f.Data)
		}
	}
	var last map[string]any
	for _, f := range slices.Backward(frames) {
		if f.Event == "values" {
			_ = json.Unmarshal([]byte(f.Data), &last)
			break
		}
	}
	msgs, _ := last["messages"].([]any)
	if len(msgs) != 4 {
		return rid, frames, fmt.Errorf("final values hold %d messages", len(msgs))
	}
	if followed != nil {
		fs := <-followed
		if followErr != nil {
			return rid, frames, fmt.Errorf("follower: %w", followErr)
		}
		if len(fs) != len(frames) {
			return rid, frames, fmt.Errorf("follower on %s got %d frames, the origin %d", follow.name, len(fs), len(frames))
		}
		for i := range fs {
			if fs[i].Raw != frames[i].Raw {
				return rid, frames, fmt.Errorf("follower frame %d differs: %q vs %q", i, fs[i].Raw, frames[i].Raw)
			}
		}
	}
	return rid, frames, nil
}

// checkRelayed compares every run's relayed frames in Postgres with what
// its client received (the relay finishes shortly after the stream).
func checkRelayed(t *testing.T, schema string, runIDs []string, received [][]frame) {
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	q := `SELECT count(*) FROM ` + pgx.Identifier{schema, "antler_run_events"}.Sanitize() + ` WHERE run_id = $1`
	deadline := time.Now().Add(10 * time.Second)
	for i, rid := range runIDs {
		for {
			var n int
			if err := conn.QueryRow(ctx, q, rid).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == len(received[i]) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d: %d frames relayed, %d received", i, n, len(received[i]))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
