//go:build unix

package acptools

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes the agent the leader of a new process group, so
// that everything it spawns can be killed with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process group led by pid. The caller must not have
// reaped pid yet, so that the group id cannot have been reused.
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
