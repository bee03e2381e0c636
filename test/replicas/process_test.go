package replicas_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/antlerhq/antler/store/postgres/pgtest"
)

// The antler binary, built once per test binary.
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// antlerBinary builds cmd/antler into a temporary directory (once).
func antlerBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "antler-replicas-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "antler")
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/antlerhq/antler/cmd/antler")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// procConfig is the config.yaml of the replica processes: the scripted
// model served over HTTP, the sandbox's ls tool, and the Postgres
// backend in the test's schema with a short run lease.
func procConfig(modelURL, schema string, leaseSeconds int) string {
	return fmt.Sprintf(`
models:
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
database:
  backend: postgres
  postgres_url: $ANTLER_TEST_POSTGRES_URL
  postgres_schema: %s
  pool_size: 20
  run_lease_seconds: %d
`, modelURL, schema, leaseSeconds)
}

// sqliteConfig is procConfig with the default SQLite backend: the
// single-process baseline of the load test.
func sqliteConfig(modelURL string) string {
	cfg := procConfig(modelURL, "unused", 30)
	return cfg[:strings.Index(cfg, "database:")]
}

// proc is one `antler serve` process.
type proc struct {
	name string
	url  string
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  strings.Builder // stderr after the listening line
	done chan struct{}
}

var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

// startProc starts `antler serve` on a free loopback port with the
// shared config and home.
func startProc(t testing.TB, name, cfgPath, home string) *proc {
	t.Helper()
	cmd := exec.Command(antlerBinary(t), "serve", "--addr", "127.0.0.1:0", "--config", cfgPath, "--home", home, "--log-level", "info")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, pgtest.EnvURL + "=" + pgtest.URL(t)}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if m := listening.FindStringSubmatch(line); m != nil && !sent {
				urlc <- m[1]
				sent = true
			}
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() { cmd.Wait(); close(p.done) }()
	select {
	case p.url = <-urlc:
	case <-p.done:
		t.Fatalf("%s exited before listening:\n%s", name, p.stderr())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s did not listen within 60 s:\n%s", name, p.stderr())
	}
	t.Cleanup(func() { p.stop(t) })
	return p
}

func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// stop ends the process gracefully (SIGTERM), killing it after 20 s.
func (p *proc) stop(t testing.TB) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Errorf("%s did not stop within 20 s of SIGTERM; killing it\n%s", p.name, p.stderr())
		p.cmd.Process.Kill()
		<-p.done
	}
}

// kill ends the process with SIGKILL: no shutdown, no lease release.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// waitFor polls cond every 50 ms until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func getJSON(c *client, path string) (int, map[string]any) {
	resp := c.do("GET", path, nil)
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

// history returns the checkpoint ids of a thread, newest first.
func history(c *client, tid string) []string {
	var hist []map[string]any
	c.json("POST", "/api/threads/"+tid+"/history", map[string]any{"limit": 1000}, 200, &hist)
	var ids []string
	for _, h := range hist {
		ids = append(ids, fmt.Sprint(h["checkpoint_id"]))
	}
	return ids
}

// startProcNoFatal is startProc for a goroutine: it reports failures
// with Errorf and returns nil.
func startProcNoFatal(t *testing.T, name, cfgPath, home string) (p *proc) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: %v", name, r)
			p = nil
		}
	}()
	return startProc(&nonFatal{T: t}, name, cfgPath, home)
}

// nonFatal turns Fatal into a panic that startProcNoFatal recovers, so
// that a helper can run off the test goroutine.
type nonFatal struct{ *testing.T }

func (n *nonFatal) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (n *nonFatal) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// newLoopbackServer serves h on 127.0.0.1 until the test ends and returns
// its base URL.
func newLoopbackServer(t *testing.T, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
