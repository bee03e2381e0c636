//go:build !unix

package customagent

import "os"

// flock is a no-op where flock(2) does not exist: updates are then
// serialised within one process only.
func flock(f *os.File) error { return nil }

func funlock(f *os.File) error { return nil }
