//go:build !unix

package sqlite

import "os"

// canLock reports whether a process that exits loses its locks; where
// flock(2) does not exist a lock file proves nothing, and the runs of
// another process are never taken for abandoned.
const canLock = false

// tryLock never takes the lock where flock(2) does not exist.
func tryLock(*os.File) (bool, error) { return false, nil }
