//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// killRounds bounds the scans of killTagged: a process forked while a
// scan runs is found by the next one, and a round kills every process
// found, so a command that keeps forking runs out of parents quickly.
const killRounds = 10

// killTagged kills with SIGKILL every process whose environment holds
// tag ("NAME=value"): every descendant of a bash command, including
// those that left its process group and session (setsid, nohup, a
// double fork reparented to init), unless it replaced its whole
// environment or made itself unreadable (a setuid program, when Antler
// is not root). Processes are found by reading /proc/<pid>/environ,
// which needs no privilege for one's own processes, and signalled
// through a pidfd after the tag is checked again, so a recycled PID is
// never hit. It scans until a round finds none, at most killRounds
// times; errNoProcScan means /proc could not be listed.
func killTagged(tag string) error {
	needle := []byte("\x00" + tag + "\x00")
	for range killRounds {
		pids, err := taggedPIDs(needle)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			killIfTagged(pid, needle)
		}
	}
	return fmt.Errorf("processes of the command were still found after %d rounds of kills", killRounds)
}

// taggedPIDs lists the processes whose environment holds needle
// ("\x00NAME=value\x00").
func taggedPIDs(needle []byte) ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoProcScan, err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoProcScan, err)
	}
	self := os.Getpid()
	var pids []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		if hasTag(pid, needle) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// hasTag reports whether the environment of pid holds needle. A process
// that is gone, a zombie (empty environment) or unreadable has none.
func hasTag(pid int, needle []byte) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	return bytes.HasPrefix(env, needle[1:]) || bytes.Contains(env, needle)
}

// killIfTagged sends SIGKILL to pid if it still holds needle, through a
// pidfd that pins the process checked; on kernels without pidfds
// (before 5.3) it falls back to kill(2).
func killIfTagged(pid int, needle []byte) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) && hasTag(pid, needle) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		return // ESRCH: gone already
	}
	defer unix.Close(fd)
	if hasTag(pid, needle) {
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	}
}
