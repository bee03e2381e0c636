package cli

import "golang.org/x/sys/unix"

// The termios requests of watchCtrlC.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
