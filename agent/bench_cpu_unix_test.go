//go:build unix

package agent_test

import "syscall"

// cpuTime returns the CPU time (user and system) the process has used so
// far, in nanoseconds; 0 when unknown.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
