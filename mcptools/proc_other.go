//go:build !unix

package mcptools

import (
	"os"
	"os/exec"
)

func setProcessGroup(*exec.Cmd) {}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
