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

// warmChildEnv marks the child process of TestFirstQueryLoadsNoTable.
const warmChildEnv = "ANTLER_SEARCH_WARM_CHILD"

// TestFirstQueryLoadsNoTable checks that building an index loads the
// data tables searches read, so a process's first query (here a Chinese
// one against an English catalogue, which reaches both derivations.txt
// and cedict.txt) allocates no more than the same query asked again.
// The tables are per process, so the measurement runs in a fresh child
// process where no other test has loaded them.
func TestFirstQueryLoadsNoTable(t *testing.T) {
	if os.Getenv(warmChildEnv) == "1" {
		measureFirstQuery()
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestFirstQueryLoadsNoTable$", "-test.count=1")
	cmd.Env = append(os.Environ(), warmChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var first, again uint64
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, "alloc "); ok {
			f := strings.Fields(rest)
			first, _ = strconv.ParseUint(f[0], 10, 64)
			again, _ = strconv.ParseUint(f[1], 10, 64)
		}
	}
	if first == 0 || again == 0 {
		t.Fatalf("child printed no figures:\n%s", out)
	}
	// cedict.txt's line index alone is 344 KB; a query allocates a few KB.
	if first > again+64<<10 {
		t.Errorf("first query allocated %d bytes, the same query again %d: the first loaded a table", first, again)
	}
}

// measureFirstQuery builds an index and prints the bytes allocated by
// its first query and by the same query again.
func measureFirstQuery() {
	ix := Build([]*tool.Tool{
		testTool("files", "read_file", "Read the contents of a text file."),
		testTool("files", "write_file", "Write a recommendation to a file."),
		testTool("web", "fetch_page", "Fetch a web page and convert it to markdown."),
	}, nil)
	const query = "推荐 一个 文件 conversation"
	allocated := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ix.Search(query, 5)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	first := allocated()
	again := allocated()
	println("alloc", first, again)
}
