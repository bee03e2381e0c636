package gateway_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDeleteThread_removesSymlinksNotTheirTargets: deleting a thread whose
// folder holds symlinks to outside (user-data replaced by one, a file
// link in outputs) removes the links and leaves the outside files.
func TestDeleteThread_removesSymlinksNotTheirTargets(t *testing.T) {
	e := newEnv(t, envOptions{})
	tid, tp := e.newThread()
	outside := outsideDir(t)
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(tp.Outputs, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(tp.Workspace, "dir")); err != nil {
		t.Fatal(err)
	}
	e.json("DELETE", "/api/threads/"+tid, "", nil, 200, nil)
	if _, err := os.Lstat(tp.Base); !os.IsNotExist(err) {
		t.Errorf("thread folder after delete: %v", err)
	}
	if diff := cmp.Diff([]string{"secret.txt"}, dirNames(t, outside)); diff != "" {
		t.Errorf("outside folder changed (-want +got):\n%s", diff)
	}

	tid, tp = e.newThread()
	replaceWithSymlink(t, tp.UserData, outside)
	e.json("DELETE", "/api/threads/"+tid, "", nil, 200, nil)
	if diff := cmp.Diff([]string{"secret.txt"}, dirNames(t, outside)); diff != "" {
		t.Errorf("outside folder changed after deleting a thread whose user-data is a link (-want +got):\n%s", diff)
	}
}
