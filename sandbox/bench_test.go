package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree10k writes 10,000 small text files (100 folders of 100) under the
// workspace of u1/t1; one line in every 100th file holds "needle".
func tree10k(b *testing.B, f *fixture) {
	b.Helper()
	tp := f.paths(b, "u1", "t1")
	body := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit\n", 20)
	for d := 0; d < 100; d++ {
		dir := filepath.Join(tp.Workspace, "src", fmt.Sprintf("d%03d", d))
		mustDo(b, os.MkdirAll(dir, 0o755))
		for i := 0; i < 100; i++ {
			content := body
			if i == 0 {
				content += "func needle() {}\n"
			}
			mustDo(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i)), []byte(content), 0o644))
		}
	}
}

func BenchmarkGrep10kFiles(b *testing.B) {
	f := newFixture(b, fixtureOpts{})
	tree10k(b, f)
	b.ResetTimer()
	for b.Loop() {
		out := f.text(b, "u1", "t1", "grep", map[string]any{"pattern": "needle", "path": "/mnt/user-data/workspace", "literal": true, "case_sensitive": true})
		if !strings.HasPrefix(out, "Found 100 matches") {
			b.Fatal(out[:min(len(out), 200)])
		}
	}
}

func BenchmarkGrep10kFilesRegexIgnoreCase(b *testing.B) {
	f := newFixture(b, fixtureOpts{})
	tree10k(b, f)
	b.ResetTimer()
	for b.Loop() {
		out := f.text(b, "u1", "t1", "grep", map[string]any{"pattern": `func\s+NEEDLE`, "path": "/mnt/user-data/workspace"})
		if !strings.HasPrefix(out, "Found 100 matches") {
			b.Fatal(out[:min(len(out), 200)])
		}
	}
}

func BenchmarkGlob10kFiles(b *testing.B) {
	f := newFixture(b, fixtureOpts{})
	tree10k(b, f)
	b.ResetTimer()
	for b.Loop() {
		out := f.text(b, "u1", "t1", "glob", map[string]any{"pattern": "src/**/f000.go", "path": "/mnt/user-data/workspace"})
		if !strings.HasPrefix(out, "Found 100 paths") {
			b.Fatal(out[:min(len(out), 200)])
		}
	}
}

func BenchmarkReadFile(b *testing.B) {
	f := newFixture(b, fixtureOpts{})
	tp := f.paths(b, "u1", "t1")
	mustDo(b, os.WriteFile(filepath.Join(tp.Workspace, "a.txt"), []byte(strings.Repeat("line of text\n", 1000)), 0o644))
	for b.Loop() {
		f.text(b, "u1", "t1", "read_file", map[string]any{"path": "/mnt/user-data/workspace/a.txt"})
	}
}
