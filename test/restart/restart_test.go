package restart_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/antlerhq/antler/internal/cli"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store/sqlite"
)

// serveArgsEnv, when set, makes the test binary `antler serve` with these
// arguments (a JSON array) instead of running the tests.
const serveArgsEnv = "ANTLER_TEST_RESTART_SERVE_ARGS"

func TestMain(m *testing.M) {
	if env := os.Getenv(serveArgsEnv); env != "" {
		var args []string
		if err := json.Unmarshal([]byte(env), &args); err != nil {
			fmt.Fprintln(os.Stderr, serveArgsEnv+":", err)
			os.Exit(2)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Main(ctx, args, cli.Options{})
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// slowScript keeps a run going for about 2 s: 40 steps, each an ls call
// (a different path each time, so loop detection stays quiet) answered
// after 25 ms, then a final answer.
func slowScript() modeltest.Script {
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
		if n >= 40 {
			return modeltest.Turn{Text: "all listed", Delay: 25 * time.Millisecond}
		}
		args := json.RawMessage(fmt.Sprintf(`{"description":"step","path":"/mnt/user-data/step-%d"}`, n))
		return modeltest.Turn{Delay: 25 * time.Millisecond, ToolCalls: []model.ToolCall{{Name: "ls", Arguments: args}}}
	}
	return modeltest.Script{NoRecord: true, ChunkSize: 16, Rules: []modeltest.Rule{{Reply: modeltest.Turn{Func: step}}}}
}

func writeConfig(t *testing.T, modelURL string) (cfgPath, home string) {
	home = t.TempDir()
	cfgPath = filepath.Join(home, "config.yaml")
	cfg := fmt.Sprintf(`models:
  - name: test-model
    use: langchain_openai:ChatOpenAI
    model: scripted
    base_url: %s
    api_key: modeltest
tools:
  - name: ls
    group: file:read
    use: deerflow.sandbox.tools:ls_tool
sandbox:
  use: deerflow.sandbox.local:LocalSandboxProvider
`, modelURL)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, home
}

// server is one `antler serve` child process.
type server struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
	mu   sync.Mutex
	log  strings.Builder
}

var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

// startServer starts the test binary as `antler serve` on a free loopback
// port and waits until it listens.
func startServer(t *testing.T, cfgPath, home string) *server {
	t.Helper()
	args := []string{"--config", cfgPath, "--home", home, "--log-level", "info", "serve", "--addr", "127.0.0.1:0"}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	encoded, _ := json.Marshal(args)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, serveArgsEnv + "=" + string(encoded)}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() { cmd.Wait(); close(s.done) }()
	select {
	case s.url = <-urlc:
	case <-s.done:
		t.Fatalf("antler serve exited before listening:\n%s", s.stderr())
	case <-time.After(30 * time.Second):
		s.kill()
		t.Fatalf("antler serve did not listen within 30 s:\n%s", s.stderr())
	}
	return s
}

func (s *server) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// kill ends the process with SIGKILL: no shutdown, nothing recorded.
func (s *server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// stop ends the process gracefully.
func (s *server) stop(t *testing.T) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Errorf("antler serve did not stop within 20 s of SIGTERM")
		s.kill()
	}
}

// stream is one run streamed by the test. Its reader goroutine owns the
// counts until done is closed.
type stream struct {
	thread, run string
	first       chan struct{} // closed at the first values frame, or at the end
	done        chan struct{} // closed when the stream has ended
	// values counts the values frames received (each one follows a
	// checkpoint written); messages are the message ids of the last.
	values   int
	messages []string
	ended    bool // the end frame arrived before the kill
}

// startStream starts a run on thread tid and reads its frames in the
// background.
func startStream(t *testing.T, base, tid string) *stream {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"input":         map[string]any{"messages": []any{map[string]any{"type": "human", "content": "list everything"}}},
		"context":       map[string]any{"model_name": "test-model"},
		"stream_mode":   []string{"values"},
		"on_disconnect": "continue",
	})
	resp, err := http.Post(base+"/api/threads/"+tid+"/runs/stream", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("run on %s: status %d: %s", tid, resp.StatusCode, data)
	}
	loc := resp.Header.Get("Content-Location")
	st := &stream{thread: tid, run: loc[strings.LastIndex(loc, "/")+1:], first: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(st.done)
		defer resp.Body.Close()
		var once sync.Once
		defer once.Do(func() { close(st.first) })
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "values":
				var v struct {
					Messages []struct {
						ID string `json:"id"`
					} `json:"messages"`
				}
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &v) == nil {
					st.values++
					st.messages = st.messages[:0]
					for _, m := range v.Messages {
						st.messages = append(st.messages, m.ID)
					}
					once.Do(func() { close(st.first) })
				}
			case strings.HasPrefix(line, "data: ") && event == "end":
				st.ended = true
			}
		}
	}()
	return st
}

// TestServeKilledMidRun_recoversOnRestart is issue 17's crash test on the
// default SQLite store: 20 times, `antler serve` is killed with SIGKILL
// while 6 runs stream (each has checkpointed at least once, then 0-150 ms
// more), and restarted on the same home. After every restart no run is
// running (each interrupted one is error, with sqlite.StoppedRunError),
// no thread is busy, rejoining or cancelling an interrupted run answers
// 409 with its status error, every checkpoint written before the kill is
// in the thread's history, and the state holds every message the last
// values frame did. The next round starts new runs on the same threads.
func TestServeKilledMidRun_recoversOnRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills antler serve 20 times; skipped with -short")
	}
	const (
		kills    = 20
		inFlight = 6
	)
	m := modeltest.NewScriptServer(t, slowScript())
	cfgPath, home := writeConfig(t, m.URL)
	var last []*stream
	start := time.Now()
	for k := range kills + 1 {
		srv := startServer(t, cfgPath, home)
		if k > 0 {
			checkRecovered(t, k, srv.url, last)
		}
		if k == kills {
			srv.stop(t)
			break
		}
		last = last[:0]
		for i := range inFlight {
			last = append(last, startStream(t, srv.url, fmt.Sprint("t-", i)))
		}
		for _, st := range last {
			select {
			case <-st.first:
			case <-time.After(30 * time.Second):
				srv.kill()
				t.Fatalf("kill %d: a run sent no values frame within 30 s:\n%s", k, srv.stderr())
			}
		}
		time.Sleep(time.Duration(rand.IntN(151)) * time.Millisecond)
		srv.kill()
		for _, st := range last {
			<-st.done // the connection broke with the kill
		}
	}
	t.Logf("%d kills and restarts in %v", kills, time.Since(start).Round(time.Millisecond))
}

// checkRecovered checks what the restarted server reports about the runs
// of the killed one.
func checkRecovered(t *testing.T, k int, base string, runs []*stream) {
	t.Helper()
	var busy []any
	postJSON(t, base+"/api/threads/search", map[string]any{"status": "busy", "limit": 100}, http.StatusOK, &busy)
	if len(busy) != 0 {
		t.Errorf("restart %d: %d threads busy", k, len(busy))
	}
	for _, st := range runs {
		var run struct {
			Status   string         `json:"status"`
			Metadata map[string]any `json:"metadata"`
		}
		getJSON(t, base+"/api/threads/"+st.thread+"/runs/"+st.run, http.StatusOK, &run)
		if st.ended {
			if run.Status == "running" || run.Status == "pending" {
				t.Errorf("restart %d: run %s ended before the kill but reads %q", k, st.run, run.Status)
			}
		} else if run.Status != "error" || run.Metadata["error"] != sqlite.StoppedRunError {
			t.Errorf("restart %d: interrupted run %s: status %q error %v; want error %q", k, st.run, run.Status,
				run.Metadata["error"], sqlite.StoppedRunError)
		}
		var thread struct{ Status string }
		getJSON(t, base+"/api/threads/"+st.thread, http.StatusOK, &thread)
		if thread.Status == "busy" {
			t.Errorf("restart %d: thread %s busy", k, st.thread)
		}
		if !st.ended {
			for _, probe := range []struct{ method, path string }{
				{"GET", "/runs/" + st.run + "/stream"}, {"POST", "/runs/" + st.run + "/cancel"},
			} {
				code, body := do(t, probe.method, base+"/api/threads/"+st.thread+probe.path, nil)
				if code != http.StatusConflict || !strings.Contains(body, "status: error") {
					t.Errorf("restart %d: %s %s: %d %s; want 409 with status error", k, probe.method, probe.path, code, body)
				}
			}
		}
		// The killed run wrote the thread's newest checkpoints.
		var hist []struct {
			Metadata map[string]any `json:"metadata"`
		}
		postJSON(t, base+"/api/threads/"+st.thread+"/history", map[string]any{"limit": st.values + 10}, http.StatusOK, &hist)
		n := 0
		for _, h := range hist {
			if h.Metadata["run_id"] == st.run {
				n++
			}
		}
		if n < st.values {
			t.Errorf("restart %d: run %s has %d checkpoints in its thread's history; %d were written (values frames) before the kill",
				k, st.run, n, st.values)
		}
		var state struct {
			Values struct {
				Messages []struct {
					ID string `json:"id"`
				} `json:"messages"`
			} `json:"values"`
		}
		getJSON(t, base+"/api/threads/"+st.thread+"/state", http.StatusOK, &state)
		have := map[string]bool{}
		for _, m := range state.Values.Messages {
			have[m.ID] = true
		}
		for _, id := range st.messages {
			if !have[id] {
				t.Errorf("restart %d: thread %s lost message %s, checkpointed before the kill", k, st.thread, id)
				break
			}
		}
	}
}

func do(t *testing.T, method, url string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func getJSON(t *testing.T, url string, want int, out any) {
	t.Helper()
	decodeAnswer(t, "GET "+url, want, out, func() (int, string) { return do(t, "GET", url, nil) })
}

func postJSON(t *testing.T, url string, body any, want int, out any) {
	t.Helper()
	decodeAnswer(t, "POST "+url, want, out, func() (int, string) { return do(t, "POST", url, body) })
}

func decodeAnswer(t *testing.T, what string, want int, out any, call func() (int, string)) {
	t.Helper()
	code, body := call()
	if code != want {
		t.Fatalf("%s: %d %s; want %d", what, code, body, want)
	}
	if err := json.Unmarshal([]byte(body), out); err != nil {
		t.Fatalf("%s: %v in %s", what, err, body)
	}
}
