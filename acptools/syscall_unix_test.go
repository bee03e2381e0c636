//go:build unix

package acptools

import (
	"os"
	"syscall"
)

func syscallZero() os.Signal { return syscall.Signal(0) }
