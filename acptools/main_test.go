package acptools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// bins holds the agents built once by TestMain: the package's own test
// agent and acp-go-sdk's example agent.
var bins struct {
	testAgent string
	goExample string
	err       error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "acptools-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// One go build for both agents; acp-go-sdk is a module requirement,
	// so its example builds from the module cache without network.
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"./internal/testagent", "github.com/coder/acp-go-sdk/example/agent")
	if out, err := cmd.CombinedOutput(); err != nil {
		bins.err = fmt.Errorf("building test agents: %v\n%s", err, out)
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	bins.testAgent = filepath.Join(dir, "testagent"+exe)
	bins.goExample = filepath.Join(dir, "agent"+exe)
	code := m.Run()
	_ = os.RemoveAll(dir)
	if code == 0 {
		// Every call must leave no goroutine behind (the SDK's connection
		// goroutines end with the agent's stdout).
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func testAgentBin(t testing.TB) string {
	t.Helper()
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	return bins.testAgent
}

func goExampleBin(t testing.TB) string {
	t.Helper()
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	return bins.goExample
}

// nodeExample returns node and the path of @agentclientprotocol/sdk's
// example agent, or skips the test when they are not installed.
func nodeExample(t testing.TB) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the Node ACP example agent test needs it")
	}
	script, err = filepath.Abs(filepath.Join("..", "testdata", "peers", "node_modules", "@agentclientprotocol", "sdk", "dist", "examples", "agent.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skip("testdata/peers/node_modules is missing; run `npm ci --prefix testdata/peers` to test against the Node ACP example agent")
	}
	return node, script
}

// harness is one Invoker over a fresh home, with its logs and the pids
// of the agents it started.
type harness struct {
	home   string
	layout *vpath.Layout
	inv    *Invoker
	logs   *logRecorder

	mu   sync.Mutex
	pids []int
}

type harnessOptions struct {
	ext     func() (*config.Extensions, error)
	environ func() []string
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	home := t.TempDir()
	layout, err := vpath.New(vpath.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{home: home, layout: layout, logs: &logRecorder{}}
	h.inv, err = New(Options{Layout: layout, Extensions: o.ext, Environ: o.environ, Logger: slog.New(h.logs)})
	if err != nil {
		t.Fatal(err)
	}
	h.inv.onStart = func(pid int) {
		h.mu.Lock()
		h.pids = append(h.pids, pid)
		h.mu.Unlock()
	}
	return h
}

func (h *harness) started() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.pids...)
}

// call runs invoke_acp_agent through the tool built for agents.
func (h *harness) call(t *testing.T, ctx context.Context, c *tool.Call, agents map[string]config.ACPAgent, agent, prompt string) (*tool.Result, error) {
	t.Helper()
	cfg := config.Default()
	cfg.ACPAgents = agents
	tl, err := h.inv.Tool(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"agent": agent, "prompt": prompt})
	if c == nil {
		c = &tool.Call{ID: "call-1", Name: toolName, ThreadID: "t1", UserID: "u1"}
	}
	return tl.Handler(ctx, c, args)
}

// run is call for a single agent named "a" that must not fail with a Go
// error; it returns the result text.
func (h *harness) run(t *testing.T, a config.ACPAgent, prompt string) *tool.Result {
	t.Helper()
	if a.TimeoutSeconds == 0 {
		a.TimeoutSeconds = 60
	}
	res, err := h.call(t, t.Context(), nil, map[string]config.ACPAgent{"a": a}, "a", prompt)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	return res
}

func (h *harness) workspace(t *testing.T, user, thread string) string {
	t.Helper()
	tp, err := h.layout.ThreadPaths(user, thread)
	if err != nil {
		t.Fatal(err)
	}
	return tp.ACPWorkspace
}

// assertGone fails unless every pid has exited (a zombie left to a
// non-reaping init counts as exited).
func assertGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for _, pid := range pids {
		for processAlive(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d is still running", pid)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func processAlive(pid int) bool {
	if runtime.GOOS != "linux" {
		p, err := os.FindProcess(pid)
		return err == nil && p.Signal(syscallZero()) == nil
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// Fields: pid (comm) state ...; comm may contain spaces.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	state := s[i+2]
	return state != 'Z' && state != 'X'
}

// logRecorder is a slog handler that keeps every record as one line of
// "msg key=value ...".
type logRecorder struct {
	mu    sync.Mutex
	lines []string
	attrs []slog.Attr
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var b bytes.Buffer
	b.WriteString(r.Message)
	for _, a := range l.attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, b.String())
	l.mu.Unlock()
	return nil
}

func (l *logRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	l.mu.Lock()
	defer l.mu.Unlock()
	return &logView{l, append(append([]slog.Attr(nil), l.attrs...), as...)}
}

func (l *logRecorder) WithGroup(string) slog.Handler { return l }

// logView is a logRecorder with extra attributes that records into its
// parent.
type logView struct {
	parent *logRecorder
	attrs  []slog.Attr
}

func (v *logView) Enabled(context.Context, slog.Level) bool { return true }

func (v *logView) Handle(ctx context.Context, r slog.Record) error {
	r2 := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r2.AddAttrs(v.attrs...)
	r.Attrs(func(a slog.Attr) bool { r2.AddAttrs(a); return true })
	return v.parent.Handle(ctx, r2)
}

func (v *logView) WithAttrs(as []slog.Attr) slog.Handler {
	return &logView{v.parent, append(append([]slog.Attr(nil), v.attrs...), as...)}
}

func (v *logView) WithGroup(string) slog.Handler { return v }

// contains reports whether some log line contains all of parts.
func (l *logRecorder) contains(parts ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (l *logRecorder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func resultText(r *tool.Result) string { return r.TextContent() }
