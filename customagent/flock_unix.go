//go:build unix

package customagent

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// flock takes an exclusive lock on f, waiting for it. Locks belong to
// the open file, so two opens in one process exclude each other too.
func flock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func funlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }
