package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestGrep_searchesLargeFilesAndLongLines(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	tp := f.paths(t, "u1", "t1")
	W := "/mnt/user-data/workspace"
	write := func(name, content string) {
		t.Helper()
		mustDo(t, os.WriteFile(filepath.Join(tp.Workspace, name), []byte(content), 0o644))
	}
	// 3 MB of lines, the match on the last one.
	write("big.txt", strings.Repeat("lorem ipsum dolor sit amet\n", 3_000_000/27)+"the needle is here\n")
	// A 10,000-character line (a minified file), the match near its end.
	long := strings.Repeat("x", 9_000) + "needle" + strings.Repeat("y", 994)
	write("min.js", "first\n"+long+"\n")
	for _, tc := range []struct {
		name, path, want string
	}{
		{"match in a 3 MB file", W + "/big.txt",
			"Found 1 matches under " + W + "/big.txt\n" + W + "/big.txt:111112: the needle is here"},
		{"match on a 10,000-character line", W + "/min.js",
			"Found 1 matches under " + W + "/min.js\n" + W + "/min.js:2: " + strings.Repeat("x", 197) + "..."},
		{"both under a folder", W,
			"Found 2 matches under " + W + "\n" + W + "/big.txt:111112: the needle is here\n" + W + "/min.js:2: " + strings.Repeat("x", 197) + "..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := f.text(t, "u1", "t1", "grep", map[string]any{"pattern": "needle", "path": tc.path})
			if got != tc.want {
				t.Errorf("got:\n%.500s\nwant:\n%.500s", got, tc.want)
			}
		})
	}
}

func TestGrep_reportsFilesNotFullySearched(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	tp := f.paths(t, "u1", "t1")
	W := "/mnt/user-data/workspace"
	dir := func(name string) string {
		p := filepath.Join(tp.Workspace, name)
		mustDo(t, os.MkdirAll(p, 0o755))
		return p
	}
	// Over the per-file bound: a text head (holding the pattern), then a
	// sparse tail.
	sparseFile(t, filepath.Join(dir("huge"), "dump.sql"), "insert needle;\n", grepMaxFileBytes+1)
	mustDo(t, os.WriteFile(filepath.Join(dir("mixed"), "a.txt"), []byte("a needle\n"), 0o644))
	sparseFile(t, filepath.Join(dir("mixed"), "b.sql"), "insert needle;\n", grepMaxFileBytes+1)
	// A line over grepMaxLineBytes, the pattern past its searched head.
	line := strings.Repeat("z", grepMaxLineBytes+10) + "needle"
	mustDo(t, os.WriteFile(filepath.Join(dir("long"), "bundle.js"), []byte("head\n"+line+"\n"), 0o644))
	mustDo(t, os.WriteFile(filepath.Join(dir("bin"), "blob.bin"), []byte("needle\x00"), 0o644))

	tooBig := fmt.Sprintf("not searched: larger than %d MiB, the most grep searches in one file", grepMaxFileBytes>>20)
	for _, tc := range []struct {
		name, path, want string
	}{
		{"file over the per-file bound", W + "/huge",
			"No matches under " + W + "/huge in the files searched, but 1 file was not fully searched:\n" +
				W + "/huge/dump.sql: " + tooBig},
		{"the file itself", W + "/huge/dump.sql",
			"No matches under " + W + "/huge/dump.sql in the files searched, but 1 file was not fully searched:\n" +
				W + "/huge/dump.sql: " + tooBig},
		{"beside a match", W + "/mixed",
			"Found 1 matches under " + W + "/mixed\n" + W + "/mixed/a.txt:1: a needle\n1 file was not fully searched:\n" +
				W + "/mixed/b.sql: " + tooBig},
		{"line over the line bound", W + "/long",
			"No matches under " + W + "/long in the files searched, but 1 file was not fully searched:\n" +
				W + "/long/bundle.js: partly searched: lines longer than 1 MiB were searched in their first 1 MiB only"},
		{"binary file asked for", W + "/bin/blob.bin",
			"No matches under " + W + "/bin/blob.bin in the files searched, but 1 file was not fully searched:\n" +
				W + "/bin/blob.bin: not searched: a binary file (a NUL byte in its first 8 KiB)"},
		{"binary file in a folder", W + "/bin", "No matches found under " + W + "/bin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := f.text(t, "u1", "t1", "grep", map[string]any{"pattern": "needle", "path": tc.path})
			if got != tc.want {
				t.Errorf("got:\n%.800s\nwant:\n%.800s", got, tc.want)
			}
		})
	}
	// The head of a long line is still searched.
	got := f.text(t, "u1", "t1", "grep", map[string]any{"pattern": "zzz", "path": W + "/long"})
	if want := "Found 1 matches under " + W + "/long\n" + W + "/long/bundle.js:2: " + strings.Repeat("z", 197) + "..."; got != want {
		t.Errorf("head of a long line: got %.400q", got)
	}
}

// The per-call bound: once a call has read grepMaxCallBytes, a file that
// would pass it is listed, and the count of files beyond the listed ones
// is given.
func TestGrep_callBudgetReportsRemainingFiles(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	tp := f.paths(t, "u1", "t1")
	r, err := os.OpenRoot(tp.Workspace)
	mustDo(t, err)
	defer r.Close()
	for i := range grepMaxSkipsListed + 3 {
		mustDo(t, os.WriteFile(filepath.Join(tp.Workspace, fmt.Sprintf("f%02d.txt", i)), []byte("0123456789 needle\n"), 0o644))
	}
	g := newGrepSearch(regexp.MustCompile("needle"), 100)
	g.budget = 2 * 18 // room for two files
	for i := range grepMaxSkipsListed + 3 {
		name := fmt.Sprintf("f%02d.txt", i)
		if _, err := g.file(t.Context(), r, name, "/w/"+name, false); err != nil {
			t.Fatal(err)
		}
	}
	got := g.report("/w")
	var want strings.Builder
	want.WriteString("Found 2 matches under /w\n/w/f00.txt:1: 0123456789 needle\n/w/f01.txt:1: 0123456789 needle\n")
	fmt.Fprintf(&want, "%d files were not fully searched:", grepMaxSkipsListed+1)
	for i := 2; i < grepMaxSkipsListed+2; i++ {
		fmt.Fprintf(&want, "\n/w/f%02d.txt: not searched: it would take this call past 256 MiB read, the most one call searches", i)
	}
	want.WriteString("\n... and 1 more")
	if got != want.String() {
		t.Errorf("got:\n%s\nwant:\n%s", got, want.String())
	}
}

func TestSummarizeLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"short", "short"},
		{strings.Repeat("é", 200), strings.Repeat("é", 200)},
		{strings.Repeat("é", 201), strings.Repeat("é", 197) + "..."},
		{"bad \xff\xfe byte", "bad \uFFFD byte"},
		{strings.Repeat("\xff", 300) + "x", "\uFFFDx"},
		{"\uFFFD\xff", "\uFFFD\uFFFD"},
	} {
		if got := summarizeLine([]byte(tc.in)); got != tc.want {
			t.Errorf("summarizeLine(%.40q) = %q, want %q", tc.in, got, tc.want)
		}
		if old := strings.ToValidUTF8(tc.in, "\uFFFD"); len([]rune(old)) <= grepLineChars && old != tc.want {
			t.Errorf("reference for %.40q: %q", tc.in, old)
		}
	}
}
