package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// captureLimit bounds what is kept of each output stream of a command.
const captureLimit = 10 << 20

// pipeGrace is how long output is still collected after the shell exits
// while a background process keeps the pipes open.
const pipeGrace = 500 * time.Millisecond

// runTagPrefix starts the name of the environment variable that marks
// every process of one bash command ("ANTLER_SANDBOX_RUN_<32 hex
// digits>=1"), so that a timed-out command's descendants can be found
// and killed even when they left its process group (see killTagged).
// The name, not the value, is unique: an inherited tag (Antler run by
// an Antler command) is kept beside the new one, so the outer run can
// still kill the inner run's processes.
const runTagPrefix = "ANTLER_SANDBOX_RUN_"

// errNoProcScan means a command's detached descendants cannot be found
// on this system: only its process group is killed.
var errNoProcScan = errors.New("cannot list processes (/proc)")

// execResult is the outcome of one command.
type execResult struct {
	stdout, stderr string
	exitCode       int
	timedOut       bool
	// killErr is why the descendants of a timed-out or cancelled
	// command could not all be killed (errNoProcScan: not looked for).
	killErr error
}

// newRunTag returns a fresh "ANTLER_SANDBOX_RUN_<32 hex digits>=1".
func newRunTag() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return runTagPrefix + hex.EncodeToString(b[:]) + "=1"
}

// boundedBuffer keeps the first limit bytes written to it and discards
// the rest, never blocking the writer.
type boundedBuffer struct {
	mu    sync.Mutex
	buf   []byte
	limit int
	lines int // newlines written, kept or not
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines += bytes.Count(p, []byte{'\n'})
	if room := b.limit - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// lineCount is the number of newlines written so far.
func (b *boundedBuffer) lineCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lines
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.ToValidUTF8(string(b.buf), "\uFFFD")
}

// shell returns the shell bash commands run in: bash when installed, else
// sh.
func shell() string {
	for _, s := range []string{"/bin/bash", "/usr/bin/bash", "/bin/sh"} {
		if fi, err := os.Stat(s); err == nil && !fi.IsDir() {
			return s
		}
	}
	return "sh"
}

// runCommand runs command with `shell -c` in dir, with env (the whole
// environment, to which the run tag is added), stdin from /dev/null, in
// its own process group, capturing at most 10 MiB of each stream. The call returns when the shell exits (and its output pipes
// close, or pipeGrace later): background processes it started keep
// running, as DeerFlow's do. After timeout, or when ctx is cancelled
// (returned as the error), the shell and every descendant are killed:
// the process group at once, then every process carrying the command's
// run tag (see killTagged), setsid'ed ones included.
func runCommand(ctx context.Context, command, dir string, env []string, timeout time.Duration, progress commandProgress) (execResult, error) {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tag := newRunTag()
	cmd := exec.CommandContext(runCtx, shell(), "-c", command)
	cmd.Dir = dir
	cmd.Env = append(env[:len(env):len(env)], tag)
	cmd.Stdin = nil // /dev/null
	stdout := &boundedBuffer{limit: captureLimit}
	stderr := &boundedBuffer{limit: captureLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Kill the whole group (the shell and what stayed in it) at
		// once, then the descendants that left it.
		if cmd.Process == nil {
			return nil
		}
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			err = cmd.Process.Kill()
		}
		_ = killTagged(tag)
		return err
	}
	cmd.WaitDelay = pipeGrace
	stopWatch := progress.watch(stdout, stderr)
	err := cmd.Run()
	stopWatch()
	res := execResult{stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil || errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		// Sweep again once the shell is gone: this catches what was forked
		// during the first sweep, and a deadline that passed after the
		// shell exited (while its pipes drained), when Cancel never ran.
		res.killErr = killTagged(tag)
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		res.timedOut = true
		return res, nil
	}
	var ee *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
	case errors.As(err, &ee):
		res.exitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.exitCode = -int(ws.Signal())
		}
	default:
		return res, err
	}
	if cmd.ProcessState != nil && res.exitCode == 0 {
		res.exitCode = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.exitCode = -int(ws.Signal())
		}
	}
	return res, nil
}

// commandProgress reports on a running command: every every (<= 0: never),
// report gets the time since the command started and the lines written
// to stdout and stderr so far.
type commandProgress struct {
	every  time.Duration
	report func(elapsed time.Duration, lines int)
}

// watch starts the reports and returns the function that stops them (and
// waits until no report is running).
func (p commandProgress) watch(stdout, stderr *boundedBuffer) (stop func()) {
	if p.every <= 0 || p.report == nil {
		return func() {}
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.report(time.Since(start), stdout.lineCount()+stderr.lineCount())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
