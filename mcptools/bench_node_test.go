package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// BenchmarkNodeFirstCall measures the first call of a new thread to a
// real Node stdio server (testdata/peers): each op starts the thread's
// process and makes one call; the resident memory of that process tree
// is reported as rss-MB. See docs/benchmarks.md.
func BenchmarkNodeFirstCall(b *testing.B) {
	servers := []struct{ pkg, tool, args string }{
		{"server-memory", "read_graph", `{}`},
		{"server-filesystem", "list_allowed_directories", `{}`},
		{"server-everything", "echo", `{"message":"x"}`},
	}
	for _, s := range servers {
		b.Run(s.pkg, func(b *testing.B) {
			node, script := npmServer(b, s.pkg)
			args := []string{script}
			if s.pkg == "server-filesystem" {
				args = append(args, b.TempDir())
			}
			var rss int64
			ext := parseExt(b, `{"n": `+stdioJSON(node, args, nil)+`}`)
			m := mcptools.New(mcptools.Options{Extensions: mcptools.Static(ext),
				ProcessRSS: func(pid int) (int64, bool) { r, ok := mcptools.TreeRSS(pid); rss = r; return r, ok }})
			defer m.Close()
			tools, err := m.Tools(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			var tl *tool.Tool
			for _, x := range tools {
				if x.Meta[mcptools.MetaTool] == s.tool {
					tl = x
				}
			}
			if tl == nil {
				b.Fatalf("no tool %s", s.tool)
			}
			i := 0
			for b.Loop() {
				i++
				r, err := tl.Handler(b.Context(), &tool.Call{UserID: "u", ThreadID: fmt.Sprint("t", i)}, []byte(s.args))
				if err != nil || r.IsError {
					b.Fatal(err, r)
				}
			}
			b.ReportMetric(float64(rss)/(1<<20), "rss-MB")
		})
	}
}

// nodeScope is one Manager of BenchmarkNodeNewThread: a Node server with
// one process_scope, and the pids of the processes it measured.
type nodeScope struct {
	m     *mcptools.Manager
	tl    *tool.Tool            // the tool the benchmark calls
	tools map[string]*tool.Tool // by the server's name of the tool

	mu   sync.Mutex
	pids map[int]bool // every process the Manager measured (each one after its first call)
}

// newNodeScope starts a Manager of the npm server pkg whose entry sets
// extra (such as "process_scope": "shared"), discovers its tools and
// returns the one named toolName.
func newNodeScope(b *testing.B, pkg, toolName string, extra map[string]any, o mcptools.Options) *nodeScope {
	b.Helper()
	node, script := npmServer(b, pkg)
	args := []string{script}
	if pkg == "server-filesystem" {
		args = append(args, b.TempDir())
	}
	entry := map[string]any{"type": "stdio", "command": node, "args": args}
	maps.Copy(entry, extra)
	j, _ := json.Marshal(map[string]any{"n": entry})
	s := &nodeScope{pids: map[int]bool{}, tools: map[string]*tool.Tool{}}
	o.Extensions = mcptools.Static(parseExt(b, string(j)))
	o.ProcessRSS = func(pid int) (int64, bool) {
		s.mu.Lock()
		s.pids[pid] = true
		s.mu.Unlock()
		return mcptools.TreeRSS(pid)
	}
	s.m = mcptools.New(o)
	tools, err := s.m.Tools(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	for _, x := range tools {
		s.tools[x.Meta[mcptools.MetaTool]] = x
	}
	if s.tl = s.tools[toolName]; s.tl == nil {
		b.Fatalf("no tool %s", toolName)
	}
	return s
}

// call makes one call in thread and returns how long it took.
func (s *nodeScope) call(b *testing.B, thread, args string) time.Duration {
	b.Helper()
	start := time.Now()
	r, err := s.tl.Handler(b.Context(), &tool.Call{UserID: "u", ThreadID: thread}, []byte(args))
	if err != nil || r.IsError {
		b.Fatal(err, r)
	}
	return time.Since(start)
}

// alive returns the number and total resident memory (process trees,
// /proc VmRSS) of the processes s measured that are still running.
func (s *nodeScope) alive() (n int, rss int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid := range s.pids {
		if r, ok := mcptools.TreeRSS(pid); ok {
			n, rss = n+1, rss+r
		}
	}
	return n, rss
}

// nodeThreads is the number of new threads of one op of
// BenchmarkNodeNewThread.
const nodeThreads = 20

// BenchmarkNodeNewThread measures, in one run, the first call of each of
// nodeThreads new threads to a real Node stdio server (testdata/peers)
// with a process per thread ("process_scope": "thread", the default and
// DeerFlow's behaviour: the thread's call starts its own process) and with
// "process_scope": "shared" (the thread's call reuses the server's running
// process). The two Managers alternate, thread by thread, and which goes
// first alternates too. After the nodeThreads threads it reports the
// processes still running and their total resident memory. See
// docs/benchmarks.md.
func BenchmarkNodeNewThread(b *testing.B) {
	servers := []struct{ pkg, tool, args string }{
		{"server-memory", "read_graph", `{}`},
		{"server-everything", "echo", `{"message":"x"}`},
	}
	for _, s := range servers {
		b.Run(s.pkg, func(b *testing.B) {
			npmServer(b, s.pkg) // skips before the loop when not installed
			var firstThread, firstShared time.Duration
			var procsThread, procsShared, rssThread, rssShared int64
			ops := 0
			for b.Loop() {
				ops++
				perThread := newNodeScope(b, s.pkg, s.tool, nil, mcptools.Options{})
				shared := newNodeScope(b, s.pkg, s.tool, map[string]any{"process_scope": "shared"}, mcptools.Options{})
				for i := range nodeThreads {
					thread := fmt.Sprint("op", ops, "-t", i)
					if i%2 == 0 {
						firstThread += perThread.call(b, thread, s.args)
						firstShared += shared.call(b, thread, s.args)
					} else {
						firstShared += shared.call(b, thread, s.args)
						firstThread += perThread.call(b, thread, s.args)
					}
				}
				n, rss := perThread.alive()
				procsThread, rssThread = procsThread+int64(n), rssThread+rss
				n, rss = shared.alive()
				procsShared, rssShared = procsShared+int64(n), rssShared+rss
				perThread.m.Close()
				shared.m.Close()
			}
			calls := float64(ops * nodeThreads)
			b.ReportMetric(firstThread.Seconds()*1e3/calls, "thread-ms/call")
			b.ReportMetric(firstShared.Seconds()*1e3/calls, "shared-ms/call")
			b.ReportMetric(float64(procsThread)/float64(ops), "thread-procs")
			b.ReportMetric(float64(procsShared)/float64(ops), "shared-procs")
			b.ReportMetric(float64(rssThread)/float64(ops)/(1<<20), "thread-rss-MB")
			b.ReportMetric(float64(rssShared)/float64(ops)/(1<<20), "shared-rss-MB")
		})
	}
	b.Run("bound", benchNodeBound)
}

// The bound of BenchmarkNodeNewThread/bound and its number of new threads.
const nodeBound, nodeBoundThreads = 4, 12

// benchNodeBound starts nodeBoundThreads new threads of server-everything
// (per-thread processes) under MaxProcesses = nodeBound while a call that
// lasts the whole op keeps one more thread's process busy. It reports the
// processes the Manager holds (most after any call, procs-max), the
// server processes running (the most seen after any call, os-procs-max,
// which counts evicted processes still exiting, and those left at the
// end, procs-alive), whether the busy process was kept (busy-kept, 1 or
// 0; it is the oldest, so a bound that evicted the oldest rather than the
// least recently used idle process would close it) and the mean first
// call (ms/call; each one evicts an idle process).
func benchNodeBound(b *testing.B) {
	if m, _ := filepath.Glob("/proc/self/task/*/children"); len(m) == 0 {
		b.Skip("needs /proc/self/task/*/children (Linux) to count the server processes")
	}
	npmServer(b, "server-everything")
	var first time.Duration
	var procsMax, osMax, alive, busyKept int
	ops := 0
	for b.Loop() {
		ops++
		before := liveChildren()
		s := newNodeScope(b, "server-everything", "echo", nil, mcptools.Options{MaxProcesses: nodeBound, TerminateGrace: 500 * time.Millisecond})
		discovered := liveChildren() // with the control process
		ctx, cancel := context.WithCancel(b.Context())
		var wg sync.WaitGroup
		wg.Go(func() {
			_, _ = s.tools["trigger-long-running-operation"].Handler(ctx, &tool.Call{UserID: "u", ThreadID: "busy"}, []byte(`{"duration":3600,"steps":1}`))
		})
		busy := waitNewChild(b, discovered)
		for i := range nodeBoundThreads {
			first += s.call(b, fmt.Sprint("op", ops, "-t", i), `{"message":"x"}`)
			n, _ := s.m.Processes()
			procsMax = max(procsMax, n)
			osMax = max(osMax, len(newChildren(before)))
		}
		// Let the evicted processes exit (stdin closed; TerminateGrace).
		deadline := time.Now().Add(hangGuard)
		for len(newChildren(before)) > nodeBound && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		alive += len(newChildren(before))
		if _, ok := mcptools.TreeRSS(busy); ok {
			busyKept++
		}
		cancel()
		wg.Wait()
		s.m.Close()
	}
	b.ReportMetric(first.Seconds()*1e3/float64(ops*nodeBoundThreads), "ms/call")
	b.ReportMetric(float64(procsMax), "procs-max")
	b.ReportMetric(float64(osMax), "os-procs-max")
	b.ReportMetric(float64(alive)/float64(ops), "procs-alive")
	b.ReportMetric(float64(busyKept)/float64(ops), "busy-kept")
}

// liveChildren returns the running (not zombie) child processes of the
// test process.
func liveChildren() map[int]bool {
	live := map[int]bool{}
	files, _ := filepath.Glob("/proc/self/task/*/children")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(field); err == nil {
				if _, ok := mcptools.TreeRSS(pid); ok {
					live[pid] = true
				}
			}
		}
	}
	return live
}

// newChildren returns the running child processes not in before.
func newChildren(before map[int]bool) []int {
	var pids []int
	for pid := range liveChildren() {
		if !before[pid] {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitNewChild waits, up to hangGuard, for a child process not in before
// and returns its pid.
func waitNewChild(b *testing.B, before map[int]bool) int {
	b.Helper()
	for deadline := time.Now().Add(hangGuard); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if pids := newChildren(before); len(pids) > 0 {
			return pids[0]
		}
	}
	b.Fatal("the busy thread's process did not start")
	return 0
}
