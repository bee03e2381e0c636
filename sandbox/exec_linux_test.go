//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// procState returns the state letter of pid in /proc (R, S, Z...), or ""
// when there is no such process.
func procState(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// "pid (comm) S ...": the comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return ""
	}
	return string(data[i+2])
}

// alive reports whether pid runs (exists and is not a zombie).
func alive(pid int) bool {
	s := procState(pid)
	return s != "" && s != "Z" && s != "X"
}

// waitPIDFile waits (at most 10 s) for a command to write its PID to p.
func waitPIDFile(t *testing.T, p string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, err := os.ReadFile(p)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil && pid > 0 {
			return pid
		}
	}
	t.Fatalf("no PID in %s", p)
	return 0
}

// killLeftoversAtCleanup kills, at the end of the test, every process
// still running in dir (the test's own workspace), so that a failing test
// leaves nothing behind.
func killLeftoversAtCleanup(t *testing.T, dir string) {
	t.Cleanup(func() {
		names, _ := filepath.Glob("/proc/[0-9]*/cwd")
		for _, cwd := range names {
			if target, err := os.Readlink(cwd); err == nil && target == dir {
				if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(cwd))); err == nil && pid != os.Getpid() {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	})
}

// procPPID returns the parent of pid, or 0.
func procPPID(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if i := bytes.LastIndexByte(data, ')'); err == nil && i >= 0 {
		if f := strings.Fields(string(data[i+1:])); len(f) > 1 {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// waitGone waits (at most 10 s, a hang guard) for pid to be gone from
// /proc. A process still a zombie at the end is dead, and accepted, when
// its parent is not this process (its reaper is outside Antler); a
// zombie child of this process would be a reaping bug.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if procState(pid) == "" {
			return
		}
	}
	switch state, ppid := procState(pid), procPPID(pid); {
	case state == "Z" && ppid != os.Getpid():
		t.Logf("process %d is dead, a zombie of process %d, which has not reaped it", pid, ppid)
	case state == "Z":
		t.Errorf("process %d is a zombie child of the test process: not reaped", pid)
	default:
		t.Errorf("process %d still runs (state %s) 10 s after its command was killed", pid, state)
	}
}

func TestBash_timeoutKillsDetachedDescendants(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true, mutate: func(c *config.Config) { c.Sandbox.BashCommandTimeout = 1 }})
	tp := f.paths(t, "u1", "t1")
	killLeftoversAtCleanup(t, tp.Workspace)
	for _, tc := range []struct{ name, command string }{
		{"setsid child", "setsid sh -c 'echo $$ > p1; exec sleep 1000' & sleep 30"},
		{"setsid child of an exited subshell", "(setsid sh -c 'echo $$ > p2; exec sleep 1000' &); sleep 30"},
		{"nohup setsid, output redirected", "nohup setsid sh -c 'echo $$ > p3; exec sleep 1000' > /dev/null 2>&1 & sleep 30"},
		{"double fork inside setsid", "setsid sh -c '(sh -c \"echo \\$\\$ > p4; exec sleep 1000\" &); sleep 1000' & sleep 30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pidFile := "p" + tc.command[strings.Index(tc.command, "> p")+3:][:1]
			got := f.text(t, "u1", "t1", "bash", map[string]any{"command": tc.command})
			if got != timeoutNotice(1) {
				t.Errorf("output = %q, want the timeout notice", got)
			}
			pid := waitPIDFile(t, filepath.Join(tp.Workspace, pidFile))
			waitGone(t, pid)
		})
	}
}

// The decision pinned here: a command that returns normally leaves the
// background processes it started running (DeerFlow's semantics, which
// the timeout notice relies on: "start it in the background"). Only a
// timeout or a cancelled call kills them.
func TestBash_normalReturnLeavesBackgroundRunning(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true, mutate: func(c *config.Config) { c.Sandbox.BashCommandTimeout = 5 }})
	tp := f.paths(t, "u1", "t1")
	got := f.text(t, "u1", "t1", "bash", map[string]any{"command": "setsid sh -c 'echo $$ > bg; exec sleep 1000' > /dev/null 2>&1 & echo started"})
	if got != "started\n" {
		t.Errorf("output = %q", got)
	}
	killLeftoversAtCleanup(t, tp.Workspace)
	pid := waitPIDFile(t, filepath.Join(tp.Workspace, "bg"))
	if !alive(pid) {
		t.Errorf("background process %d was killed when its command returned", pid)
	}
}

func TestBash_cancelKillsDetachedDescendants(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true, mutate: func(c *config.Config) { c.Sandbox.BashCommandTimeout = 600 }})
	tp := f.paths(t, "u1", "t1")
	killLeftoversAtCleanup(t, tp.Workspace)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		raw := []byte(`{"description":"d","command":"setsid sh -c 'echo $$ > pc; exec sleep 1000' & sleep 1000"}`)
		_, err := f.byName["bash"].Handler(ctx, &tool.Call{ID: "c1", Name: "bash", UserID: "u1", ThreadID: "t1"}, raw)
		done <- err
	}()
	pid := waitPIDFile(t, filepath.Join(tp.Workspace, "pc"))
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	waitGone(t, pid)
}

func TestBash_missingProcScanLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	tl := NewTools(nil, ToolsOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for range 3 {
		tl.reportKill(fmt.Errorf("%w: no such file", errNoProcScan))
	}
	tl.reportKill(nil)
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
}

// Every command carries a fresh run tag, and keeps an inherited one (an
// Antler run by an Antler command), so each run can kill its own.
func TestBash_runTagInEnvironment(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true, toolsOpt: func(o *ToolsOptions) {
		o.Environ = func() []string { return []string{"PATH=" + os.Getenv("PATH"), runTagPrefix + "0123=1"} }
	}})
	cmd := map[string]any{"command": "env | grep '^" + runTagPrefix + "'"}
	first, second := f.text(t, "u1", "t1", "bash", cmd), f.text(t, "u1", "t1", "bash", map[string]any{"command": cmd["command"]})
	fresh := regexp.MustCompile(`^` + runTagPrefix + `[0-9a-f]{32}=1$`)
	lines := strings.Split(strings.TrimSpace(first), "\n")
	if len(lines) != 2 || !slices.Contains(lines, runTagPrefix+"0123=1") || !slices.ContainsFunc(lines, fresh.MatchString) {
		t.Errorf("tags = %q", first)
	}
	if first == second {
		t.Errorf("two commands share the tag %q", first)
	}
}
