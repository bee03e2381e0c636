package mcptools

import (
	"os"
	"runtime"
	"testing"
)

// The derived bound is the memory share over the mean measured RSS,
// clamped to 4..256; a fixed MaxProcesses wins.
func TestProcessLimits_bound(t *testing.T) {
	const gib, mib = 1 << 30, 1 << 20
	tests := []struct {
		name  string
		l     processLimits
		rss   []int64
		wantN int
	}{
		{name: "24 GiB, Node servers", l: processLimits{memory: 24 * gib, share: 0.25}, rss: []int64{66 * mib, 70 * mib}, wantN: 90},
		{name: "nothing measured", l: processLimits{memory: 24 * gib, share: 0.25}, wantN: 48},
		{name: "small container", l: processLimits{memory: 512 * mib, share: 0.25}, wantN: minProcesses},
		{name: "tiny servers", l: processLimits{memory: 64 * gib, share: 0.25}, rss: []int64{2 * mib}, wantN: maxProcesses},
		{name: "fixed", l: processLimits{fixed: 7, memory: 64 * gib, share: 0.25}, rss: []int64{2 * mib}, wantN: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n, _ := tt.l.bound(tt.rss); n != tt.wantN {
				t.Errorf("bound = %d, want %d", n, tt.wantN)
			}
		})
	}
}

// On Linux the test process's own tree has a resident size, and the
// machine's memory is read, not assumed.
func TestTreeRSSAndMachineMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	if rss, ok := treeRSS(os.Getpid()); !ok || rss <= 0 {
		t.Errorf("treeRSS = %d, %v", rss, ok)
	}
	if mem, ok := machineMemory(); !ok || mem <= 0 {
		t.Errorf("machineMemory = %d, %v", mem, ok)
	}
}
