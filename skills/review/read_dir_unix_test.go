//go:build unix

package review

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadDirSkipsPipes: a named pipe in the package is a reader error
// and never opened (opening it would block the review).
func TestReadDirSkipsPipes(t *testing.T) {
	dir := writeTree(t, map[string]string{"SKILL.md": validSkill("demo")})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	s := readTree(t, dir, Limits{})
	if diff := cmp.Diff([]string{"text SKILL.md"}, filePaths(s)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"read_failed pipe"}, errorCodes(s)); diff != "" {
		t.Errorf("reader errors (-want +got):\n%s", diff)
	}
}
