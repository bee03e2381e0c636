package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "extensions_config.json")

	if err := WriteFileAtomic(path, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	assertFile(t, path, "one", 0o640)

	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	assertFile(t, path, "two", 0o600) // existing mode preserved

	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(path, link); err != nil {
		t.Skipf("symlinks unsupported: %v", err)
	}
	if err := WriteFileAtomic(link, []byte("three"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("symlink replaced by a file: %v, %v", fi, err)
	}
	assertFile(t, path, "three", 0o600)

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("directory has %d entries, want 2 (no temp files left)", len(entries))
	}
}

func TestWriteFileAtomicMissingDir(t *testing.T) {
	if err := WriteFileAtomic(filepath.Join(t.TempDir(), "no", "such", "f"), []byte("x"), 0o644); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

func TestSaveExtensions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "extensions_config.json")
	if err := SaveExtensions(path, []byte("{not json")); err == nil {
		t.Error("SaveExtensions accepted invalid JSON")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("invalid document was written: %v", err)
	}
	doc := `{"mcpServers": {"a": {"command": "c", "env": {"K": "$UNSET_VAR"}}}}`
	if err := SaveExtensions(path, []byte(doc)); err != nil {
		t.Fatal(err)
	}
	assertFile(t, path, doc, 0o644)
}

func assertFile(t *testing.T, path, want string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != want {
		t.Errorf("%s = %q, want %q", path, data, want)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != mode {
		t.Errorf("%s mode = %v, want %v", path, got, mode)
	}
}
