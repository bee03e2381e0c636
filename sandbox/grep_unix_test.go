//go:build unix

package sandbox

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO is never opened (an open for reading would wait for a writer):
// skipped in a folder, reported when it is the path itself.
func TestGrep_fifoDoesNotBlock(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	tp := f.paths(t, "u1", "t1")
	mustDo(t, syscall.Mkfifo(filepath.Join(tp.Workspace, "pipe"), 0o644))
	W := "/mnt/user-data/workspace"
	for _, tc := range []struct{ path, want string }{
		{W, "No matches found under " + W},
		{W + "/pipe", "No matches under " + W + "/pipe in the files searched, but 1 file was not fully searched:\n" +
			W + "/pipe: not searched: not a regular file"},
	} {
		done := make(chan string, 1)
		go func() { done <- f.text(t, "u1", "t1", "grep", map[string]any{"pattern": "x", "path": tc.path}) }()
		select {
		case got := <-done:
			if got != tc.want {
				t.Errorf("%s: got %q, want %q", tc.path, got, tc.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("grep of %s blocked on the FIFO", tc.path)
		}
	}
}
