package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces the file at path with data so that readers see
// either the old or the new content, never a mix: it writes a temporary
// file in the same directory, syncs it, and renames it over the target. An
// existing file keeps its mode (perm applies to new files), and a symlink
// at path is followed so that its target is replaced, not the link.
//
// Concurrent writers of the same file must serialise themselves (for a
// read-modify-write); the last rename wins.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	mode := perm
	if fi, err := os.Stat(target); err == nil {
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return err
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmpName, target); err != nil {
		return err
	}
	ok = true
	// Make the rename durable; not all systems can sync a directory.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// SaveExtensions validates data as extensions_config.json (invalid JSON or
// malformed sections are rejected; per-server problems are not) and writes
// it atomically to path, mode 0644 for a new file.
func SaveExtensions(path string, data []byte) error {
	if _, err := ParseExtensions(path, data, func(string) (string, bool) { return "", true }); err != nil {
		return err
	}
	return WriteFileAtomic(path, data, 0o644)
}
