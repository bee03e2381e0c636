//go:build linux || darwin || freebsd || netbsd || openbsd

package cli

import (
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// keepCtrlCAKey turns the terminal's ISIG off (Ctrl-C a byte, not
// SIGINT), leaves the rest of its mode alone, and restores what it found.
func TestKeepCtrlCAKey_turnsSignalsOffAndRestores(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	fd := int(tty.Fd())
	before, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		t.Fatal(err)
	}
	if before.Lflag&unix.ISIG == 0 {
		t.Fatal("a new pty has ISIG off already; the test proves nothing")
	}
	restore, err := keepCtrlCAKey(fd)
	if err != nil {
		t.Fatal(err)
	}
	during, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		t.Fatal(err)
	}
	if during.Lflag&unix.ISIG != 0 {
		t.Error("ISIG is still on: Ctrl-C between turns would be SIGINT")
	}
	if during.Lflag|unix.ISIG != before.Lflag || during.Iflag != before.Iflag || during.Oflag != before.Oflag {
		t.Errorf("the mode changed beyond ISIG: lflag %#x -> %#x", before.Lflag, during.Lflag)
	}
	restore()
	after, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != before.Lflag {
		t.Errorf("restore left lflag %#x, want %#x", after.Lflag, before.Lflag)
	}
}
