//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package cli

import "errors"

// watchCtrlC is not available here: chat falls back to SIGINT, which
// cancels the turn as well.
func watchCtrlC(int, func()) (func(), error) {
	return nil, errors.New("no termios on this system")
}

// keepCtrlCAKey is not available here: Ctrl-C stays SIGINT, and chat
// falls back to it (nil: nothing to restore).
func keepCtrlCAKey(int) (func(), error) { return nil, nil }
