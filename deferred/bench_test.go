package deferred_test

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/antlerhq/antler/config"
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

// BenchmarkCatalogBuildDistinct builds the catalogue of a synthetic list
// in which no tool is a copy of another (searcheval.DistinctTools), at
// 1,000 and 10,000 tools: with words drawn from a 20,000-word vocabulary
// (vocab=20000), and with no word shared by two tools (vocab=none, the
// worst case). It is the build that NewCatalog and every cache miss pay.
func BenchmarkCatalogBuildDistinct(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, vocab := range []int{20000, 0} {
			tools := searcheval.DistinctTools(n, vocab)
			name := fmt.Sprintf("tools=%d/vocab=%d", n, vocab)
			if vocab == 0 {
				name = fmt.Sprintf("tools=%d/vocab=none", n)
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				cpu := cpuTime()
				for b.Loop() {
					deferred.NewCatalog(tools)
				}
				b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
			})
		}
	}
}

// BenchmarkSetupPerRun is one run's deferred-tool setup (what
// agent.DeferTools does for the lead agent and for every subagent task)
// over n MCP tools that the run receives as fresh labelled copies, as
// package toolset hands them out. Uncached is the path before the cache:
// the index is built on every run. Cached takes it from a CatalogCache
// that already holds it; the runs rotate over eight lists of distinct
// copies, so every run compares its list in full. cpu-µs/op is process
// CPU time, thread-cpu-µs/op (cached only: it runs on one goroutine) the
// CPU time of the benchmark's thread, which leaves out waiting for a core.
func BenchmarkSetupPerRun(b *testing.B) {
	cfg := config.ToolSearch{Enabled: true}
	for _, n := range []int{1000, 10000} {
		base := searcheval.DistinctTools(n, 20000)
		runs := make([][]*tool.Tool, 8) // copies made before the timer, as Assemble makes them
		for i := range runs {
			runs[i] = runCopies(base)
		}
		b.Run(fmt.Sprintf("tools=%d/uncached", n), func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			i := 0
			for b.Loop() {
				if _, err := deferred.SetupRouted(runs[i%len(runs)], cfg, nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
		b.Run(fmt.Sprintf("tools=%d/cached", n), func(b *testing.B) {
			cc := deferred.NewCatalogCache(deferred.CatalogCacheOptions{})
			if _, err := cc.SetupRouted(runCopies(base), cfg, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu, tcpu := cpuTime(), threadCPUTime()
			i := 0
			for b.Loop() {
				if _, err := cc.SetupRouted(runs[i%len(runs)], cfg, nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
			b.ReportMetric(float64((threadCPUTime()-tcpu).Microseconds())/float64(b.N), "thread-cpu-µs/op")
		})
		b.Run(fmt.Sprintf("tools=%d/cached-same-values", n), func(b *testing.B) {
			// The same copies every run, as toolset's assembly cache
			// hands them out while nothing changed.
			cc := deferred.NewCatalogCache(deferred.CatalogCacheOptions{})
			if _, err := cc.SetupRouted(runs[0], cfg, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cc.SetupRouted(runs[0], cfg, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCatalogCacheLive reports the heap that a cached index of
// 10,000 tools keeps live beyond the tools themselves (live-MB), for the
// two vocabularies of BenchmarkCatalogBuildDistinct.
func BenchmarkCatalogCacheLive(b *testing.B) {
	for _, vocab := range []int{20000, 0} {
		tools := searcheval.DistinctTools(10000, vocab)
		b.Run(fmt.Sprintf("vocab=%d", vocab), func(b *testing.B) {
			var before, after runtime.MemStats
			for b.Loop() {
				runtime.GC()
				runtime.ReadMemStats(&before)
				cc := deferred.NewCatalogCache(deferred.CatalogCacheOptions{})
				cc.Catalog(tools)
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(cc)
			}
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "live-MB")
		})
	}
}

// BenchmarkSearchLiveMCPBench runs the 28 LiveMCPBench tasks (whole
// text, long multi-step requests) against its own 527-tool catalogue:
// the size of a real deployment's MCP catalogue. Each op is one query;
// cpu-µs/op is the process's CPU time per query.
func BenchmarkSearchLiveMCPBench(b *testing.B) {
	dir := evalDir(b)
	entries, err := searcheval.ReadJSONL[searcheval.Entry](filepath.Join(dir, "livemcpbench_catalog.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	qs, err := searcheval.ReadJSONL[searcheval.Query](filepath.Join(dir, "livemcpbench_queries.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	tools, _ := searcheval.Tools(entries)
	c := deferred.NewCatalog(tools)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	i := 0
	for b.Loop() {
		c.Search(qs[i%len(qs)].Query, 5)
		i++
	}
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N)/1000, "cpu-µs/op")
}
