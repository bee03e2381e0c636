package mcptools_test

import (
	"context"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// alive reports whether the process pid (a decimal string) exists.
func alive(t *testing.T, pid string) bool {
	t.Helper()
	n, err := strconv.Atoi(pid)
	if err != nil {
		t.Fatalf("pid %q: %v", pid, err)
	}
	return syscall.Kill(n, 0) == nil
}

// waitGone waits, up to hangGuard, for the process pid to exit.
func waitGone(t *testing.T, pid string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for alive(t, pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %s was not closed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// blockIn starts a call of sleep in thread that runs until the returned
// function is called, and waits until the call holds its process.
func blockIn(t *testing.T, m *mcptools.Manager, sleep *tool.Tool, call *tool.Call) (stop func()) {
	t.Helper()
	if sleep == nil {
		t.Fatalf("blockIn: nil tool (not discovered)")
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = sleep.Handler(ctx, call, []byte(`{"millis": 3600000}`)) })
	return func() { cancel(); wg.Wait() }
}

// At the bound, a new process closes the least recently used idle
// process, not a busy one even when that is older.
func TestProcessBound_evictsTheIdleProcessFirst(t *testing.T) {
	ext := parseExt(t, `{"f": `+fakeServerJSON(t, "serve", "")+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), MaxProcesses: 3, TerminateGrace: 200 * time.Millisecond})
	tools := toolsByName(t, m, "f_pid", "f_sleep")
	pid, sleep := tools["f_pid"], tools["f_sleep"]
	t1, t2, t3 := &tool.Call{UserID: "u", ThreadID: "t1"}, &tool.Call{UserID: "u", ThreadID: "t2"}, &tool.Call{UserID: "u", ThreadID: "t3"}

	p1, _ := callText(t, pid, t1, "")
	stop := blockIn(t, m, sleep, t1) // t1 is the oldest and busy
	defer stop()
	p2, _ := callText(t, pid, t2, "")                // idle
	control, _ := callText(t, pid, &tool.Call{}, "") // idle, more recent than t2
	if n, _ := m.Processes(); n != 3 {
		t.Fatalf("%d processes, want 3", n)
	}
	p3, isErr := callText(t, pid, t3, "")
	if isErr {
		t.Fatalf("t3: %s", p3)
	}
	waitGone(t, p2)
	if !alive(t, p1) {
		t.Error("the busy process of t1 was closed")
	}
	if !alive(t, control) {
		t.Error("the control process was closed before the older idle t2")
	}
	if n, _ := m.Processes(); n != 3 {
		t.Errorf("%d processes, want 3", n)
	}
	stop()
	if p, _ := callText(t, pid, t1, ""); p != p1 {
		t.Errorf("t1 runs in %s after its call, want its own process %s", p, p1)
	}
}

// When every process within the bound has a call in flight, a caller
// waits up to ProcessWait: it gets a slot when a call ends, else an error
// result naming the bound; no busy process is closed.
func TestProcessBound_neverEvictsABusyProcess(t *testing.T) {
	ext := parseExt(t, `{"f": `+fakeServerJSON(t, "serve", "")+`}`)
	tests := []struct {
		name   string
		wait   time.Duration
		finish bool // t1's call ends while t3 waits
		want   string
	}{
		{name: "error after the wait", wait: 300 * time.Millisecond,
			want: "Error: MCP server 'f' cannot start another process: the bound of 2 stdio MCP server processes (mcptools.Options.MaxProcesses) " +
				"is reached and every process has a call in flight (waited 300ms for one to finish); a server without per-thread files can serve " +
				`every thread from one process with "process_scope": "shared" in its entry of extensions_config.json`},
		{name: "slot freed while waiting", wait: hangGuard, finish: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), MaxProcesses: 2, ProcessWait: tt.wait, TerminateGrace: 200 * time.Millisecond})
			tools := toolsByName(t, m, "f_pid", "f_sleep")
			pid, sleep := tools["f_pid"], tools["f_sleep"]
			t1, t2 := &tool.Call{UserID: "u", ThreadID: "t1"}, &tool.Call{UserID: "u", ThreadID: "t2"}
			p1, _ := callText(t, pid, t1, "")
			p2, _ := callText(t, pid, t2, "") // closes the idle control process
			stop1 := blockIn(t, m, sleep, t1)
			defer stop1()
			stop2 := blockIn(t, m, sleep, t2)
			defer stop2()
			// Let both calls reach their servers.
			time.Sleep(200 * time.Millisecond)

			if tt.finish {
				time.AfterFunc(300*time.Millisecond, stop1)
			}
			got, isErr := callText(t, pid, &tool.Call{UserID: "u", ThreadID: "t3"}, "")
			if tt.finish {
				if isErr {
					t.Fatalf("t3: %s", got)
				}
				waitGone(t, p1) // t1 became idle and made room
			} else if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if !alive(t, p2) {
				t.Error("the busy process of t2 was closed")
			}
			if !tt.finish && !alive(t, p1) {
				t.Error("the busy process of t1 was closed")
			}
		})
	}
}

// process_scope: "shared" serves two threads from one process (the
// control process); "thread", the default, starts one per thread.
func TestProcessScope_sharedOrPerThread(t *testing.T) {
	tests := []struct {
		name, setting string
		shared        bool
	}{
		{name: "default is per thread"},
		{name: "thread", setting: `"process_scope": "thread"`},
		{name: "shared", setting: `"process_scope": "shared"`, shared: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ext := parseExt(t, `{"f": `+fakeServerJSON(t, "serve", tt.setting)+`}`)
			m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext)})
			pid := toolsByName(t, m, "f_pid")["f_pid"]
			p1, _ := callText(t, pid, &tool.Call{UserID: "u", ThreadID: "t1"}, "")
			p2, _ := callText(t, pid, &tool.Call{UserID: "u", ThreadID: "t2"}, "")
			control, _ := callText(t, pid, &tool.Call{}, "")
			n, _ := m.Processes()
			if tt.shared && (p1 != p2 || p1 != control || n != 1) {
				t.Errorf("shared: pids %s, %s, control %s, %d processes; want one process", p1, p2, control, n)
			}
			if !tt.shared && (p1 == p2 || p1 == control || p2 == control || n != 3) {
				t.Errorf("per thread: pids %s, %s, control %s, %d processes; want three", p1, p2, control, n)
			}
		})
	}
}

// idleClock is a clock the test moves.
type idleClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *idleClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *idleClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// A process no call used for IdleTimeout is closed; one used since is
// kept, and the next call of the closed one starts it again.
func TestIdleTimeout_closesIdleProcesses(t *testing.T) {
	clock := &idleClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ext := parseExt(t, `{"f": `+fakeServerJSON(t, "serve", "")+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), Now: clock.Now, IdleTimeout: 10 * time.Minute, TerminateGrace: 200 * time.Millisecond})
	pid := toolsByName(t, m, "f_pid")["f_pid"]
	t1, t2 := &tool.Call{UserID: "u", ThreadID: "t1"}, &tool.Call{UserID: "u", ThreadID: "t2"}
	p1, _ := callText(t, pid, t1, "")
	clock.advance(9 * time.Minute)
	m.SweepIdle()
	if p, _ := callText(t, pid, t1, ""); p != p1 {
		t.Fatalf("t1 was closed after 9 minutes idle (pid %s -> %s)", p1, p)
	}
	p2, _ := callText(t, pid, t2, "")
	clock.advance(9 * time.Minute)
	p2again, _ := callText(t, pid, t2, "") // t2 used again; t1 idle 9 min
	clock.advance(2 * time.Minute)         // t1 idle 11 min, t2 2 min
	m.SweepIdle()
	waitGone(t, p1)
	if p2again != p2 || !alive(t, p2) {
		t.Errorf("t2 (used 2 minutes ago) was closed")
	}
	if p, isErr := callText(t, pid, t1, ""); isErr || p == p1 {
		t.Errorf("t1 after its close: %q", p)
	}
}

// The derived bound follows the measured resident memory: with 16 GiB, a
// quarter for servers and 1 GiB per process, four processes fit, and a
// fifth closes the least recently used idle one.
func TestProcessBound_derivedFromMeasuredMemory(t *testing.T) {
	ext := parseExt(t, `{"f": `+fakeServerJSON(t, "serve", "")+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), Memory: 16 << 30, TerminateGrace: 200 * time.Millisecond,
		ProcessRSS: func(int) (int64, bool) { return 1 << 30, true }})
	if _, bound := m.Processes(); bound != 32 {
		t.Errorf("bound before any measurement = %d, want 32 (4 GiB / 128 MiB)", bound)
	}
	pid := toolsByName(t, m, "f_pid")["f_pid"] // measures the control process
	first, _ := callText(t, pid, &tool.Call{UserID: "u", ThreadID: "t0"}, "")
	for _, th := range []string{"t1", "t2"} {
		callText(t, pid, &tool.Call{UserID: "u", ThreadID: th}, "")
	}
	if n, bound := m.Processes(); n != 4 || bound != 4 {
		t.Fatalf("%d processes, bound %d; want 4 and 4", n, bound)
	}
	control, _ := callText(t, pid, &tool.Call{}, "")
	callText(t, pid, &tool.Call{UserID: "u", ThreadID: "t3"}, "")
	waitGone(t, first)
	if !alive(t, control) {
		t.Error("the control process, used more recently, was closed")
	}
	if n, _ := m.Processes(); n != 4 {
		t.Errorf("%d processes, want 4", n)
	}
}
