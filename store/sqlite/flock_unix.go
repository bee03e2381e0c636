//go:build unix

package sqlite

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// canLock reports whether a process that exits loses its locks (so that a
// lock file proves its owner alive).
const canLock = true

// tryLock takes an exclusive lock on f without waiting; false when
// another open file holds it. Locks belong to the open file, so two
// Stores of one process are told apart too, and the kernel drops them
// when the process ends, however it ends.
func tryLock(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, unix.EINTR):
			return false, err
		}
	}
}
