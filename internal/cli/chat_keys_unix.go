//go:build linux || darwin || freebsd || netbsd || openbsd

package cli

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// ctrlC is the byte a terminal sends for Ctrl-C when it does not turn
// the key into SIGINT.
const ctrlC = 0x03

// watchCtrlC switches the terminal on fd to the mode of a running turn and
// calls onCtrlC (from its own goroutine) each time Ctrl-C is pressed, until
// stop is called; stop restores the terminal's mode and returns once the
// watcher has stopped reading, so that the next prompt owns the terminal.
//
// In that mode ISIG is off, so Ctrl-C is a byte and not SIGINT: a SIGINT
// from the terminal reaches the whole foreground process group, so it
// would also end the MCP servers and tool processes the chat started,
// and the process's interrupt handler would end the chat. ECHO and
// ICANON are off, so that keys typed during a turn do not garble the
// answer; they are read and dropped.
func watchCtrlC(fd int, onCtrlC func()) (stop func(), err error) {
	saved, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	mode := *saved
	mode.Lflag &^= unix.ISIG | unix.ICANON | unix.ECHO
	mode.Cc[unix.VMIN], mode.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &mode); err != nil {
		return nil, err
	}
	// wake unblocks the poll when stop is called: a blocked read of a
	// terminal cannot be interrupted otherwise.
	var wake [2]int
	if err := unix.Pipe(wake[:]); err != nil {
		_ = unix.IoctlSetTermios(fd, ioctlSetTermios, saved)
		return nil, err
	}
	var wg sync.WaitGroup
	wg.Go(func() { readCtrlC(fd, wake[0], onCtrlC) })
	var once sync.Once
	return func() {
		once.Do(func() {
			_, _ = unix.Write(wake[1], []byte{0})
			wg.Wait()
			unix.Close(wake[0])
			unix.Close(wake[1])
			_ = unix.IoctlSetTermios(fd, ioctlSetTermios, saved)
		})
	}, nil
}

// readCtrlC reads the terminal until wake is readable or the terminal
// fails, calling onCtrlC for every Ctrl-C byte.
func readCtrlC(fd, wake int, onCtrlC func()) {
	buf := make([]byte, 256)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 && fds[0].Revents&unix.POLLIN == 0 {
			return
		}
		n, err := unix.Read(fd, buf)
		if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			return
		}
		for _, b := range buf[:max(n, 0)] {
			if b == ctrlC {
				onCtrlC()
			}
		}
	}
}

// keepCtrlCAKey turns ISIG off on the terminal on fd for the whole chat
// and returns the function that restores the mode it found. Without it
// the terminal is in its ordinary mode in the moments between a prompt
// and a turn (after a line is entered, after a message is printed), and
// a Ctrl-C pressed then is SIGINT, which ends the chat instead of the
// turn. With it such a Ctrl-C is a byte that the next reader (the line
// editor or watchCtrlC) takes as Ctrl-C. The line editor records the
// mode when it is created and goes back to it after every prompt, so
// this must run before liner.NewLiner.
func keepCtrlCAKey(fd int) (restore func(), err error) {
	saved, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	mode := *saved
	mode.Lflag &^= unix.ISIG
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &mode); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, saved) }, nil
}
