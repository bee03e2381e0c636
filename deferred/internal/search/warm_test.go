package search

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/antlerhq/antler/tool"
)

// warmChildEnv marks the child process of the first-query tests.
const warmChildEnv = "ANTLER_SEARCH_WARM_CHILD"

// TestFirstQueryLoadsNoTable checks that building an index loads the
// data tables searches read, so a process's first query (here a Chinese
// one against an English catalogue, which reaches both derivations.txt
// and cedict.txt) loads none of them. The tables are per process, so the
// measurement runs in a fresh child process where no other test has
// loaded them. It counts the bytes the memory profile attributes to the
// table loaders rather than all bytes a query allocates: under the race
// detector sync.Pool drops items at random, so a query's total
// allocation varies by a pooled buffer's size from run to run.
func TestFirstQueryLoadsNoTable(t *testing.T) {
	m := firstQueryMeasures(t)["tables"]
	if m.built <= 0 {
		t.Fatalf("child saw no table loaded by Build (the measurement is broken): %+v", m)
	}
	if m.queried != 0 {
		t.Errorf("the table loaders allocated %d bytes under Build and %d under the first query: the query loaded a table", m.built, m.queried)
	}
}

// TestBuildRunsTheFirstQuery checks that Build runs a query on the index
// it built (warmQuery), so the first query a caller sends is not the
// index's first: Build allocates the query scratch, and the first query
// finds it in the pool instead of allocating its own. Under the race
// detector sync.Pool may drop the scratch Build put, so only Build's
// side is checked there.
func TestBuildRunsTheFirstQuery(t *testing.T) {
	m := firstQueryMeasures(t)["scratch"]
	if m.built <= 0 {
		t.Fatalf("Build allocated no query scratch: it ran no query (%+v)", m)
	}
	if !raceEnabled && m.queried != 0 {
		t.Errorf("query scratch: %d bytes allocated under Build, %d under the first query: the first query was the index's first", m.built, m.queried)
	}
}

// firstQueryMeasure is a child's count of the bytes allocated under some
// functions, split by whether Build or the first query called them.
type firstQueryMeasure struct{ built, queried int64 }

// firstQueryMeasures runs measureFirstQuery in a fresh child process and
// returns its measures by name ("tables", "scratch"). In the child it
// measures, prints and skips.
func firstQueryMeasures(t *testing.T) map[string]firstQueryMeasure {
	t.Helper()
	if os.Getenv(warmChildEnv) == "1" {
		measureFirstQuery()
		t.SkipNow()
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), warmChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	got := make(map[string]firstQueryMeasure)
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "measure" {
			var m firstQueryMeasure
			m.built, _ = strconv.ParseInt(f[2], 10, 64)
			m.queried, _ = strconv.ParseInt(f[3], 10, 64)
			got[f[1]] = m
		}
	}
	if len(got) != 2 {
		t.Fatalf("child printed %d measures, want 2:\n%s", len(got), out)
	}
	return got
}

// measureFirstQuery builds an index, runs its first query and prints the
// bytes the table loaders and the query scratch allocated under Build
// and under the query. The memory profile is read once, at the end: the
// collections that publish it would empty the index's pool.
func measureFirstQuery() {
	runtime.MemProfileRate = 1
	ix := Build([]*tool.Tool{
		testTool("files", "read_file", "Read the contents of a text file."),
		testTool("files", "write_file", "Write a recommendation to a file."),
		testTool("web", "fetch_page", "Fetch a web page and convert it to markdown."),
	}, nil)
	ix.Search("推荐 一个 文件 conversation", 5)
	tables, scratch := allocBytes()
	println("measure tables", tables.built, tables.queried)
	println("measure scratch", scratch.built, scratch.queried)
}

// allocBytes returns the bytes the memory profile attributes to the
// loaders of the search tables (newSortedLines for derivations.txt and
// cedict.txt, and the synonym map of lexicon.go) and to getScratch, each
// split by whether buildIndexSplit (or a goroutine it started) was on
// the stack.
func allocBytes() (tables, scratch firstQueryMeasure) {
	// The profile is as of the last completed collection; the second
	// cycle publishes what the first one swept.
	runtime.GC()
	runtime.GC()
	var records []runtime.MemProfileRecord
	for {
		n, ok := runtime.MemProfile(records, true)
		if ok {
			records = records[:n]
			break
		}
		records = make([]runtime.MemProfileRecord, n+64)
	}
	for _, r := range records {
		var into *firstQueryMeasure
		underBuild := false
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			switch {
			case into != nil:
			case strings.HasSuffix(f.Function, ".newSortedLines") || strings.HasSuffix(f.File, "/lexicon.go"):
				into = &tables
			case strings.HasSuffix(f.Function, ".getScratch"):
				into = &scratch
			}
			underBuild = underBuild || strings.Contains(f.Function, ".buildIndexSplit")
			if !more {
				break
			}
		}
		switch {
		case into == nil:
		case underBuild:
			into.built += r.AllocBytes
		default:
			into.queried += r.AllocBytes
		}
	}
	return tables, scratch
}
