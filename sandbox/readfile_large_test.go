package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// maxReadAlloc bounds what one read_file call of a large file may
// allocate in all (output cap 50,000 characters).
const maxReadAlloc = 4 << 20

// numberedLines returns n lines "line 000001\n"...
func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %06d\n", i)
	}
	return b.String()
}

// sparseFile writes head to p and extends it to size with a sparse tail.
func sparseFile(t testing.TB, p, head string, size int64) {
	t.Helper()
	mustDo(t, os.WriteFile(p, []byte(head), 0o644))
	mustDo(t, os.Truncate(p, size))
}

// allocated returns the bytes fn allocated on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestReadFile_largeFileMemoryBoundedByOutputCap(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	tp := f.paths(t, "u1", "t1")
	lines := numberedLines(300_000) // 3.6 MB of lines, then the NUL tail
	sparseFile(t, filepath.Join(tp.Workspace, "lines.txt"), lines, largeFileSize)
	huge := strings.Repeat("x", 1<<20) // one line of 1 GiB: x's, then NULs
	sparseFile(t, filepath.Join(tp.Workspace, "huge.txt"), huge, largeFileSize)

	limit := f.cfg.Sandbox.ReadFileOutputMaxChars
	// cut is what read_file shows of a text of total characters whose
	// head is at hand.
	cut := func(head string, total int) string {
		marker := fmt.Sprintf("\n... [truncated: showing first %d of %d chars. %s] ...", total, total, readFileHint)
		kept := limit - len(marker)
		return head[:kept] + fmt.Sprintf("\n... [truncated: showing first %d of %d chars. %s] ...", kept, total, readFileHint)
	}
	middle := numberedLines(50_009)[len(numberedLines(49_999)):]
	for _, tc := range []struct {
		name, file string
		start, end *int
		want       string
	}{
		{"no range", "lines.txt", nil, nil, cut(lines, largeFileSize)},
		{"range at the start", "lines.txt", ptr(1), ptr(3), "line 000001\nline 000002\nline 000003"},
		{"range in the middle", "lines.txt", ptr(50_000), ptr(50_009), strings.TrimSuffix(middle, "\n")},
		{"range to the end", "lines.txt", ptr(299_999), nil,
			cut("line 299999\nline 300000\n"+strings.Repeat("\x00", limit), 24+largeFileSize-len(lines))},
		{"one huge line", "huge.txt", nil, nil, cut(huge, largeFileSize)},
		{"one huge line ranged", "huge.txt", ptr(1), ptr(1), cut(huge, largeFileSize)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"path": "/mnt/user-data/workspace/" + tc.file}
			if tc.start != nil {
				args["start_line"] = *tc.start
			}
			if tc.end != nil {
				args["end_line"] = *tc.end
			}
			var got string
			n := allocated(func() { got = f.text(t, "u1", "t1", "read_file", args) })
			if got != tc.want {
				t.Errorf("got %d chars %q...%q, want %d chars %q...%q", len(got), got[:min(len(got), 40)], got[max(0, len(got)-120):],
					len(tc.want), tc.want[:min(len(tc.want), 40)], tc.want[max(0, len(tc.want)-120):])
			}
			if n > maxReadAlloc {
				t.Errorf("read_file of a %d-byte file allocated %d bytes, want at most %d", largeFileSize, n, maxReadAlloc)
			}
		})
	}
}

// The read mark of a large file is its whole content's hash, so the
// read-before-write gate lets the next write through; the gate itself
// hashes the file in bounded memory.
func TestReadFile_largeFileMarksWholeContent(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	tp := f.paths(t, "u1", "t1")
	p := filepath.Join(tp.Workspace, "big.txt")
	sparseFile(t, p, numberedLines(1000), 64<<20)
	args := map[string]any{"path": "/mnt/user-data/workspace/big.txt", "start_line": 1, "end_line": 2}
	f.text(t, "u1", "t1", "read_file", args)
	var got string
	n := allocated(func() {
		got = f.text(t, "u1", "t1", "write_file", map[string]any{"path": "/mnt/user-data/workspace/big.txt", "content": "small\n"})
	})
	if got != "OK" {
		t.Fatalf("write after a ranged read: %q", got)
	}
	if n > maxReadAlloc {
		t.Errorf("the gate over a 64 MiB file allocated %d bytes, want at most %d", n, maxReadAlloc)
	}
}

func BenchmarkReadFileLarge(b *testing.B) {
	f := newFixture(b, fixtureOpts{})
	tp := f.paths(b, "u1", "t1")
	sparseFile(b, filepath.Join(tp.Workspace, "big.txt"), numberedLines(300_000), largeFileSize)
	for _, bc := range []struct {
		name string
		args map[string]any
	}{
		{"no range", map[string]any{"path": "/mnt/user-data/workspace/big.txt"}},
		{"range in the middle", map[string]any{"path": "/mnt/user-data/workspace/big.txt", "start_line": 50_000, "end_line": 50_100}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(largeFileSize)
			for b.Loop() {
				if out := f.text(b, "u1", "t1", "read_file", bc.args); strings.HasPrefix(out, "Error") {
					b.Fatal(out)
				}
			}
		})
	}
}
