package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// TestLoad200ConcurrentRuns streams 200 runs at once over loopback with a
// stateless scripted model (a tool call, then a streamed answer), and
// checks that every stream is complete: no error, every frame there, the
// final values holding all four messages and the deltas adding up to the
// answer. No goroutine outlives the server. It reports p50/p99 of the
// whole stream and the heap growth (docs/benchmarks.md, "Gateway").
func TestLoad200ConcurrentRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("load test skipped with -short")
	}
	ignore := goleak.IgnoreCurrent()
	const runs = 200
	args, _ := json.Marshal(map[string]string{"name": "r.md", "text": "load"})
	m := modeltest.FromScript(modeltest.Script{ChunkSize: 8, NoRecord: true, Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Reply: modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "make_report", Arguments: args}}}},
		{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: "The report is ready: {last}."}},
	}})
	var mem0, mem1 runtime.MemStats
	// The subtest's cleanups close the server, the gateway and the store
	// before the leak check.
	t.Run("streams", func(t *testing.T) {
		e := newEnv(t, envOptions{model: m})
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: runs, MaxConnsPerHost: runs}}
		defer client.CloseIdleConnections()
		runtime.GC()
		runtime.ReadMemStats(&mem0)

		durations := make([]time.Duration, runs)
		errs := make([]error, runs)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range runs {
			wg.Go(func() {
				<-start
				t0 := time.Now()
				errs[i] = oneLoadRun(e, client)
				durations[i] = time.Since(t0)
			})
		}
		t0 := time.Now()
		close(start)
		wg.Wait()
		wall := time.Since(t0)
		runtime.ReadMemStats(&mem1)
		for i, err := range errs {
			if err != nil {
				t.Errorf("run %d: %v", i, err)
			}
		}
		slices.Sort(durations)
		t.Logf("%d concurrent streamed runs: wall %v, p50 %v, p99 %v, max %v; heap in use +%.1f MiB, total alloc %.1f MiB, goroutines at peak end %d",
			runs, wall.Round(time.Millisecond), durations[runs/2].Round(time.Millisecond),
			durations[runs*99/100].Round(time.Millisecond), durations[runs-1].Round(time.Millisecond),
			float64(int64(mem1.HeapInuse)-int64(mem0.HeapInuse))/(1<<20),
			float64(mem1.TotalAlloc-mem0.TotalAlloc)/(1<<20), runtime.NumGoroutine())
	})
	goleak.VerifyNone(t, ignore)
}

// oneLoadRun streams one run on a new thread and checks the transcript.
func oneLoadRun(e *env, client *http.Client) error {
	tid := uuid.NewString()
	b, _ := json.Marshal(runBody(tid, humanInput("load "+tid, nil)))
	req, _ := http.NewRequestWithContext(e.t.Context(), "POST", e.url+"/api/langgraph/threads/"+tid+"/runs/stream", bytesReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	rid, ok := runIDFrom(resp.Header.Get("Content-Location"), tid)
	if !ok {
		return fmt.Errorf("no run in Content-Location %q", resp.Header.Get("Content-Location"))
	}
	tr, err := readAll(resp.Body)
	if err != nil {
		return err
	}
	switch {
	case len(tr.Errors) > 0:
		return fmt.Errorf("error frames %v", tr.Errors)
	case !tr.Ended:
		return fmt.Errorf("no end frame")
	case tr.Metadata["run_id"] != rid:
		return fmt.Errorf("metadata %v", tr.Metadata)
	}
	for i, ev := range tr.Events {
		if ev.ID != fmt.Sprint(i+1) {
			return fmt.Errorf("frame %d has id %q: a frame was lost", i, ev.ID)
		}
	}
	msgs := messagesOf(tr.Last())
	if len(msgs) != 4 {
		return fmt.Errorf("final values hold %d messages", len(msgs))
	}
	answer := msgs[3]
	want := "The report is ready: wrote /mnt/user-data/outputs/r.md."
	if answer["content"] != want {
		return fmt.Errorf("answer %q", answer["content"])
	}
	if got := tr.Messages[answer["id"].(string)]; got == nil || got["content"] != want {
		return fmt.Errorf("streamed deltas %v", got)
	}
	return nil
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
