package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFileTools_refuseASymlinkedUserDataFolder: when a thread's user-data
// folder is replaced by a symlink out of the thread (host bash or an MCP
// stdio server can plant one), no file tool reads, lists, searches or
// writes through it.
func TestFileTools_refuseASymlinkedUserDataFolder(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	tp := f.paths(t, "u1", "t1")
	outside := t.TempDir()
	mustDo(t, os.MkdirAll(filepath.Join(outside, "workspace"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(outside, "workspace", "secret.txt"), []byte("outside secret\n"), 0o600))
	mustDo(t, os.RemoveAll(tp.UserData))
	mustDo(t, os.Symlink(outside, tp.UserData))

	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"read_file", map[string]any{"description": "d", "path": "/mnt/user-data/workspace/secret.txt"}},
		{"ls", map[string]any{"description": "d", "path": "/mnt/user-data/workspace"}},
		{"grep", map[string]any{"description": "d", "pattern": "secret", "path": "/mnt/user-data/workspace"}},
		{"glob", map[string]any{"description": "d", "pattern": "*.txt", "path": "/mnt/user-data/workspace"}},
		{"write_file", map[string]any{"description": "d", "path": "/mnt/user-data/workspace/planted.txt", "content": "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := f.call(t, "u1", "t1", tc.name, tc.args)
			text := res.TextContent()
			if strings.Contains(text, "outside secret") || strings.Contains(text, "secret.txt") {
				t.Fatalf("%s read through the symlink: %q", tc.name, text)
			}
			if !res.IsError {
				t.Errorf("%s: not an error result: %q", tc.name, text)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "workspace", "planted.txt")); err == nil {
		t.Error("write_file wrote through the symlinked user-data folder")
	}
}

// TestSweepTempFiles_doesNotFollowASymlinkedUserData: the sweep of stale
// write temp files never removes files through a user-data folder that
// is a symlink out of the thread.
func TestSweepTempFiles_doesNotFollowASymlinkedUserData(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	stale := filepath.Join(outside, ".x.txt.antler-tmp-0123456789ab")
	mustDo(t, os.WriteFile(stale, []byte("x"), 0o600))
	old := time.Now().Add(-time.Hour)
	mustDo(t, os.Chtimes(stale, old, old))
	userData := filepath.Join(base, "user-data")
	mustDo(t, os.Symlink(outside, userData))
	n, err := sweepTempFiles(userData, time.Now())
	if n != 0 || err == nil {
		t.Errorf("sweep through a symlinked user-data: removed %d, err %v; want 0 and a refusal", n, err)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("the file behind the symlink is gone: %v", err)
	}
}
