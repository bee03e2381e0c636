//go:build !unix

package acptools

import (
	"os"
	"os/exec"
)

func setProcessGroup(*exec.Cmd) {}

// killGroup kills only the process itself: there are no process groups.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
