package mcptools

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The defaults of the bound on stdio server processes (see
// [Options.MaxProcesses] and docs/design.md, "Stdio server processes fit
// the machine").
const (
	// defaultMemoryShare is the share of the machine's memory (or of the
	// cgroup's limit) the stdio servers of one Manager may hold.
	defaultMemoryShare = 0.25
	// fallbackProcessRSS is the per-process estimate before any process
	// was measured, or where /proc cannot be read: about twice a Node
	// server's resident memory (69 MB for server-filesystem), since npx
	// adds a parent process of its own.
	fallbackProcessRSS = 128 << 20
	// fallbackMemory is assumed when the machine's memory cannot be read
	// (not Linux): 4 GiB, a small machine.
	fallbackMemory = 4 << 30
	// minProcesses and maxProcesses clamp the derived bound: a small
	// container still runs a few servers; 256 is DeerFlow's pool size.
	minProcesses = 4
	maxProcesses = 256
	// defaultIdleTimeout closes a stdio process no call has used for so
	// long.
	defaultIdleTimeout = 10 * time.Minute
	// defaultProcessWait is how long a caller waits for a process slot
	// when every process within the bound has a call in flight.
	defaultProcessWait = 30 * time.Second
	// rssRefresh is how often a process's resident memory is measured
	// again (at the end of a call).
	rssRefresh = 30 * time.Second
)

// processLimits decides how many stdio server processes a Manager keeps
// and for how long. It is immutable after newProcessLimits.
type processLimits struct {
	fixed    int           // Options.MaxProcesses; 0: derived from memory
	memory   int64         // bytes: the smaller of RAM and the cgroup limit
	measured bool          // memory was read, not assumed
	share    float64       // of memory, for the servers
	idle     time.Duration // idle processes older than this are closed
	wait     time.Duration // a caller's wait for a slot
	rss      func(pid int) (int64, bool)
}

func newProcessLimits(o Options) processLimits {
	l := processLimits{fixed: o.MaxProcesses, share: o.MemoryShare, idle: o.IdleTimeout, wait: o.ProcessWait, rss: o.ProcessRSS}
	if l.share <= 0 || l.share > 1 {
		l.share = defaultMemoryShare
	}
	if l.idle == 0 {
		l.idle = defaultIdleTimeout
	}
	if l.wait <= 0 {
		l.wait = defaultProcessWait
	}
	if l.rss == nil {
		l.rss = treeRSS
	}
	l.memory, l.measured = o.Memory, o.Memory > 0
	if !l.measured {
		l.memory, l.measured = machineMemory()
	}
	return l
}

// bound returns the number of processes allowed, given the resident
// memory of the processes measured so far, and the per-process estimate
// it used (0 with a fixed bound).
func (l processLimits) bound(rss []int64) (n int, estimate int64) {
	if l.fixed > 0 {
		return l.fixed, 0
	}
	estimate = fallbackProcessRSS
	if len(rss) > 0 {
		var sum int64
		for _, r := range rss {
			sum += r
		}
		estimate = max(sum/int64(len(rss)), 1<<20)
	}
	n = int(float64(l.memory) * l.share / float64(estimate))
	return min(max(n, minProcesses), maxProcesses), estimate
}

// describe explains a bound of n processes for an error message.
func (l processLimits) describe(n int, estimate int64) string {
	if l.fixed > 0 {
		return fmt.Sprintf("%d stdio MCP server processes (mcptools.Options.MaxProcesses)", n)
	}
	mem := "assumed memory"
	if l.measured {
		mem = "memory"
	}
	return fmt.Sprintf("%d stdio MCP server processes (%.0f%% of %s %s at %s each)",
		n, l.share*100, mem, formatBytes(l.memory), formatBytes(estimate))
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d B", n)
}

// machineMemory returns the memory this process may use: the smaller of
// the machine's (MemTotal in /proc/meminfo) and the memory limit of its
// cgroup (v2 memory.max, v1 memory.limit_in_bytes, as mounted at
// /sys/fs/cgroup). Where neither can be read it returns fallbackMemory
// and false.
func machineMemory() (int64, bool) {
	var limits []int64
	if kb, ok := meminfoKB("/proc/meminfo", "MemTotal"); ok {
		limits = append(limits, kb<<10)
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(f); err == nil {
			// "max" (v2) or a huge number (v1) mean no limit.
			if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && v < 1<<60 {
				limits = append(limits, v)
			}
		}
	}
	if len(limits) == 0 {
		return fallbackMemory, false
	}
	return slices.Min(limits), true
}

// meminfoKB reads one "Key:   123 kB" line of a /proc file in the format
// of /proc/meminfo and /proc/<pid>/status.
func meminfoKB(path, key string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != key {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, false
		}
		v, err := strconv.ParseInt(fields[0], 10, 64)
		return v, err == nil
	}
	return 0, false
}

// maxTreeProcesses bounds the processes treeRSS visits below one server.
const maxTreeProcesses = 64

// treeRSS returns the resident memory of the process pid and its
// descendants (npx and the node process it starts, a shell and its
// server), from VmRSS in /proc/<pid>/status and the children files of
// /proc/<pid>/task/*/. It reports false where /proc cannot be read.
func treeRSS(pid int) (int64, bool) {
	total, found := int64(0), false
	queue := []int{pid}
	for seen := 0; len(queue) > 0 && seen < maxTreeProcesses; seen++ {
		p := queue[0]
		queue = queue[1:]
		if kb, ok := meminfoKB(fmt.Sprintf("/proc/%d/status", p), "VmRSS"); ok {
			total, found = total+kb<<10, true
		}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					queue = append(queue, c)
				}
			}
		}
	}
	return total, found
}
