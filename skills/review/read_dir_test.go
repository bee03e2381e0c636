package review

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readTree(t *testing.T, dir string, limits Limits) *Snapshot {
	t.Helper()
	s, err := ReadDirPath(t.Context(), dir, Subject{Source: SourceDirectory, DisplayRef: "pkg"}, limits)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReadDir(t *testing.T) {
	tests := []struct {
		name       string
		files      map[string]string
		limits     Limits
		wantFiles  []string
		wantErrors []string
		truncated  bool
	}{
		{
			name:      "text and binary files in path order",
			files:     map[string]string{"SKILL.md": validSkill("demo"), "assets/a.bin": "\x00\x01\x02", "references/z.md": "# z"},
			wantFiles: []string{"text SKILL.md", "binary assets/a.bin", "text references/z.md"},
		},
		{
			name:      "a NUL byte in a text extension stays text",
			files:     map[string]string{"notes.md": "a\x00b"},
			wantFiles: []string{"text notes.md"},
		},
		{
			name:       "too many files",
			files:      map[string]string{"a.md": "a", "b.md": "b", "c.md": "c"},
			limits:     Limits{MaxFiles: 2},
			wantFiles:  []string{"text a.md", "text b.md"},
			wantErrors: []string{"too_many_files "},
			truncated:  true,
		},
		{
			name:       "a file over the per-file limit is listed unread",
			files:      map[string]string{"SKILL.md": "short", "big.txt": strings.Repeat("x", 64)},
			limits:     Limits{MaxFileBytes: 32},
			wantFiles:  []string{"text SKILL.md", "binary big.txt"},
			wantErrors: []string{"file_too_large big.txt"},
			truncated:  true,
		},
		{
			name:       "the total budget stops the walk",
			files:      map[string]string{"a.md": strings.Repeat("a", 40), "b.md": strings.Repeat("b", 40)},
			limits:     Limits{MaxTotalBytes: 50},
			wantFiles:  []string{"text a.md"},
			wantErrors: []string{"total_size_exceeded b.md"},
			truncated:  true,
		},
		{
			name:       "folders count towards the entry budget",
			files:      map[string]string{"d1/a.md": "a", "d2/b.md": "b", "d3/c.md": "c"},
			limits:     Limits{MaxFiles: 1},
			wantErrors: []string{"too_many_files "},
			truncated:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := readTree(t, writeTree(t, tt.files), tt.limits)
			if diff := cmp.Diff(tt.wantFiles, filePaths(s)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErrors, errorCodes(s)); diff != "" {
				t.Errorf("reader errors (-want +got):\n%s", diff)
			}
			if s.Truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v", s.Truncated, tt.truncated)
			}
		})
	}
}

// TestReadDirSymlinks: symlinks, to files or folders, in or out of the
// package, are recorded with their targets and never followed.
func TestReadDirSymlinks(t *testing.T) {
	outside := writeTree(t, map[string]string{"secret.txt": "top secret", "dir/inner.md": "inner"})
	dir := writeTree(t, map[string]string{"SKILL.md": validSkill("demo")})
	for name, target := range map[string]string{
		"leak.txt":     filepath.Join(outside, "secret.txt"),
		"leakdir":      filepath.Join(outside, "dir"),
		"inside.md":    "SKILL.md",
		"dangling.txt": "no/such/file",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	s := readTree(t, dir, Limits{})
	want := []string{"text SKILL.md", "symlink dangling.txt", "symlink inside.md", "symlink leak.txt", "symlink leakdir"}
	if diff := cmp.Diff(want, filePaths(s)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, f := range s.Files {
		if f.Content != nil && strings.Contains(*f.Content, "secret") {
			t.Errorf("%s: content read through a symlink", f.Path)
		}
		if f.Path == "leak.txt" && f.Target != filepath.Join(outside, "secret.txt") {
			t.Errorf("leak.txt target = %q", f.Target)
		}
	}
	facts := Analyze(s, ProfileDeerFlow)
	var symlinkFindings int
	for _, f := range facts.Findings {
		if f.RuleID == "package.symlink" {
			symlinkFindings++
		}
	}
	if symlinkFindings != 4 {
		t.Errorf("package.symlink findings = %d, want 4", symlinkFindings)
	}
}

func TestReadDirRootProblems(t *testing.T) {
	file := filepath.Join(writeTree(t, map[string]string{"f.txt": "x"}), "f.txt")
	tests := []struct {
		name, dir, code string
		enumerated      bool
	}{
		{"missing", filepath.Join(t.TempDir(), "nope"), "root_not_found", false},
		{"a file", file, "root_not_directory", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := readTree(t, tt.dir, Limits{})
			if diff := cmp.Diff([]string{tt.code + " "}, errorCodes(s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got := Analyze(s, ProfileDeerFlow).Completeness.PackageEnumerated; got != tt.enumerated {
				t.Errorf("package_enumerated = %v, want %v", got, tt.enumerated)
			}
		})
	}
}

func TestReadDirCancelled(t *testing.T) {
	dir := writeTree(t, map[string]string{"SKILL.md": validSkill("demo")})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ReadDirPath(ctx, dir, Subject{}, Limits{}); err == nil {
		t.Fatal("a cancelled walk returned no error")
	}
}

// TestReadDirAt: a package folder inside a parent root is read through
// it; a folder that is a symlink out of the parent is refused, and a
// missing one is a root_not_found snapshot.
func TestReadDirAt(t *testing.T) {
	parentDir := writeTree(t, map[string]string{"pkg/SKILL.md": validSkill("demo")})
	outside := writeTree(t, map[string]string{"SKILL.md": validSkill("outside")})
	if err := os.Symlink(outside, filepath.Join(parentDir, "escape")); err != nil {
		t.Fatal(err)
	}
	parent, err := os.OpenRoot(parentDir)
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Close()
	s, err := ReadDirAt(t.Context(), parent, "pkg", Subject{}, Limits{})
	if err != nil || len(s.Files) != 1 {
		t.Fatalf("pkg: %v, %+v", err, s)
	}
	if _, err := ReadDirAt(t.Context(), parent, "escape", Subject{}, Limits{}); err == nil {
		t.Errorf("a symlink out of the parent was followed")
	}
	s, err = ReadDirAt(t.Context(), parent, "missing", Subject{}, Limits{})
	if err != nil || len(s.ReaderErrors) != 1 || s.ReaderErrors[0].Code != codeRootNotFound {
		t.Errorf("missing: %v, %+v", err, s)
	}
}
