//go:build !unix

package agent_test

// cpuTime returns 0: the process's CPU time is not read on this system.
func cpuTime() int64 { return 0 }
