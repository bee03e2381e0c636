package sandbox

import (
	"context"
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

// execResult is the outcome of one command.
type execResult struct {
	stdout, stderr string
	exitCode       int
	timedOut       bool
}

// boundedBuffer keeps the first limit bytes written to it and discards
// the rest, never blocking the writer.
type boundedBuffer struct {
	mu    sync.Mutex
	buf   []byte
	limit int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.limit - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
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

// runCommand runs command with `shell -c` in dir, with env, stdin from
// /dev/null, in its own process group, capturing at most 10 MiB of each
// stream. After timeout the whole process group is killed. A cancelled
// ctx kills it too and is returned as the error.
func runCommand(ctx context.Context, command, dir string, env []string, timeout time.Duration) (execResult, error) {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, shell(), "-c", command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil // /dev/null
	stdout := &boundedBuffer{limit: captureLimit}
	stderr := &boundedBuffer{limit: captureLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Kill the whole group: the shell and everything it started.
		if cmd.Process == nil {
			return nil
		}
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return cmd.Process.Kill()
		}
		return err
	}
	cmd.WaitDelay = pipeGrace
	err := cmd.Run()
	res := execResult{stdout: stdout.String(), stderr: stderr.String()}
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
