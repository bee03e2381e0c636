package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAcquire_removesStaleTempFilesOfInterruptedWrites(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	tp := f.paths(t, "u1", "t1")
	old := time.Now().Add(-2 * tempFileStaleAfter)
	files := []struct {
		path string
		age  time.Time
		kept bool
	}{
		{filepath.Join(tp.Workspace, ".a.txt.antler-tmp-0123456789ab"), old, false},
		{filepath.Join(tp.Outputs, "deep", "er", ".report.md.antler-tmp-abcdef012345"), old, false},
		{filepath.Join(tp.Uploads, ".x.csv.antler-tmp-00aa11bb22cc"), old, false},
		// Being written right now by a concurrent write: kept.
		{filepath.Join(tp.Workspace, ".b.txt.antler-tmp-aabbccddeeff"), time.Now(), true},
		// Not names atomic writes make: kept.
		{filepath.Join(tp.Workspace, "notes.antler-tmp-0123456789ab"), old, true},
		{filepath.Join(tp.Workspace, ".c.txt.antler-tmp-xyz"), old, true},
		{filepath.Join(tp.Workspace, ".c.txt.antler-tmp-0123456789AB"), old, true},
		{filepath.Join(tp.Workspace, "a.txt"), old, true},
	}
	for _, fl := range files {
		mustDo(t, os.MkdirAll(filepath.Dir(fl.path), 0o755))
		mustDo(t, os.WriteFile(fl.path, []byte("partial"), 0o644))
		mustDo(t, os.Chtimes(fl.path, fl.age, fl.age))
	}
	// A stale name behind a symlinked folder is outside the sweep.
	outside := t.TempDir()
	outsideTmp := filepath.Join(outside, ".o.txt.antler-tmp-0123456789ab")
	mustDo(t, os.WriteFile(outsideTmp, nil, 0o644))
	mustDo(t, os.Chtimes(outsideTmp, old, old))
	mustDo(t, os.Symlink(outside, filepath.Join(tp.Workspace, "link")))

	if _, err := f.provider.Acquire(t.Context(), "u1", "t1"); err != nil {
		t.Fatal(err)
	}
	for _, fl := range files {
		_, err := os.Stat(fl.path)
		if exists := err == nil; exists != fl.kept {
			t.Errorf("%s: exists %v, want %v", fl.path, exists, fl.kept)
		}
	}
	if _, err := os.Stat(outsideTmp); err != nil {
		t.Errorf("the sweep followed a symlink: %v", err)
	}
}

func TestWriteAtomic_failedRenameRemovesTempFile(t *testing.T) {
	dir := t.TempDir()
	mustDo(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("before"), 0o644))
	r, err := os.OpenRoot(dir)
	mustDo(t, err)
	defer r.Close()
	errRename := errors.New("rename failed")
	var renamed string
	err = writeAtomic(r, "a.txt", []byte("after"), 0o644, func(oldname, newname string) error {
		renamed = oldname
		if _, err := os.Stat(filepath.Join(dir, oldname)); err != nil {
			t.Errorf("temporary file missing before the rename: %v", err)
		}
		return errRename
	})
	if !errors.Is(err, errRename) || err.Error() != errRename.Error() {
		t.Errorf("err = %v, want the rename's error as it is", err)
	}
	if !isTempName(filepath.Base(renamed)) {
		t.Errorf("temporary name %q", renamed)
	}
	entries, err := os.ReadDir(dir)
	mustDo(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"a.txt"}, names); diff != "" {
		t.Errorf("folder after a failed rename (-want +got):\n%s", diff)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "before" {
		t.Errorf("target = %q, want it untouched", got)
	}
}

func TestIsTempName(t *testing.T) {
	made := filepath.Base(tempName("dir/file.txt"))
	for _, tc := range []struct {
		name string
		want bool
	}{
		{made, true},
		{".file.txt.antler-tmp-0123456789ab", true},
		{".x.antler-tmp-0123456789ab", true},
		{"file.txt.antler-tmp-0123456789ab", false},
		{"..antler-tmp-0123456789ab", false},
		{".file.txt.antler-tmp-0123456789a", false},
		{".file.txt.antler-tmp-0123456789abc", false},
		{".file.txt.antler-tmp-0123456789AB", false},
		{".file.txt.antler-tmp-0123456789ag", false},
		{".file.txt", false},
	} {
		if got := isTempName(tc.name); got != tc.want {
			t.Errorf("isTempName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if len(made) != len(".file.txt.antler-tmp-")+2*tempRandBytes {
		t.Errorf("tempName made %q", made)
	}
}
