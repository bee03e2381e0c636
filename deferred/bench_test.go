package deferred_test

import (
	"cmp"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/internal/searcheval"
	"github.com/antlerhq/antler/tool"
)

// evalDir is the offline evaluation data (see its README): $ANTLER_EVAL_DIR,
// else the eval folder beside the repository (docs/benchmarks.md says
// where it comes from).
func evalDir(b *testing.B) string {
	dir := cmp.Or(os.Getenv("ANTLER_EVAL_DIR"), filepath.Join("..", "..", "shared", "eval"))
	if _, err := os.Stat(filepath.Join(dir, "normalized")); err != nil {
		b.Skipf("evaluation data not found in %s (set ANTLER_EVAL_DIR)", dir)
	}
	return filepath.Join(dir, "normalized")
}

// catalog10k is the LiveMCPBench catalogue replicated 19 times with
// renamed servers: 10,013 tools.
func catalog10k(b *testing.B) ([]*tool.Tool, []string) {
	dir := evalDir(b)
	entries, err := searcheval.ReadJSONL[searcheval.Entry](filepath.Join(dir, "livemcpbench_catalog.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	tools, _ := searcheval.Tools(entries)
	var queries []string
	for _, f := range []string{"livemcpbench_queries.jsonl", "metatool_queries.jsonl"} {
		qs, err := searcheval.ReadJSONL[searcheval.Query](filepath.Join(dir, f))
		if err != nil {
			b.Fatal(err)
		}
		for i, q := range qs {
			if i < 500 { // every LiveMCPBench task and 500 MetaTool queries
				queries = append(queries, q.Query)
			}
		}
	}
	return searcheval.Replicate(tools, 19), queries
}

func BenchmarkCatalogBuild10k(b *testing.B) {
	tools, _ := catalog10k(b)
	b.ReportMetric(float64(len(tools)), "tools")
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		deferred.NewCatalog(tools)
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
}

// cpuTime is the CPU time this process has used; on a shared machine it
// is a steadier measure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadCPUTime is the CPU time of the calling OS thread (the caller
// locks its goroutine to the thread): unlike wall time, it leaves out the
// time the thread waited for a core on a loaded machine.
func threadCPUTime() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// BenchmarkSearch10k runs the evaluation queries (whole text) against the
// 10k-tool catalogue and reports per-query p50 and p99 wall-clock latency
// and p50 and p99 per-query CPU time of the searching thread.
func BenchmarkSearch10k(b *testing.B) {
	tools, queries := catalog10k(b)
	c := deferred.NewCatalog(tools)
	for _, q := range queries { // warm the scratch pool
		c.Search(q, 5)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lat := make([]time.Duration, 0, b.N)
	cpuLat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu := cpuTime()
	i := 0
	for b.Loop() {
		q := queries[i%len(queries)]
		i++
		start, tstart := time.Now(), threadCPUTime()
		c.Search(q, 5)
		cpuLat = append(cpuLat, threadCPUTime()-tstart)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	report := func(d []time.Duration, unit string) {
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-"+unit)
		b.ReportMetric(float64(d[min(len(d)-1, len(d)*99/100)].Microseconds()), "p99-"+unit)
	}
	report(lat, "µs")
	report(cpuLat, "cpu-µs")
}
