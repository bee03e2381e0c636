package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// The temporary files of atomic writes are named
// "." + base + ".antler-tmp-" + 12 hex digits, beside their target. One
// that outlives its write (the process died between creating and
// renaming it) is removed by [sweepTempFiles] when the thread's sandbox
// is next opened.
const (
	tempMarker    = ".antler-tmp-"
	tempRandBytes = 6
	// tempFileStaleAfter is the age (since its last write) past which a
	// temporary file is taken for a leftover. A write keeps its
	// temporary file only while it writes and syncs at most
	// write_file_max_bytes, seconds, so a file being written is never
	// this old.
	tempFileStaleAfter = 10 * time.Minute
	// maxSweepEntries bounds the folder entries one sweep visits, so that
	// opening a thread with a huge tree stays cheap; what lies past the
	// bound is left for a later sweep.
	maxSweepEntries = 100_000
)

// errSweepBound ends a sweep at maxSweepEntries.
var errSweepBound = errors.New("sweep bound reached")

// tempName returns a new temporary name for name (slash path in a root).
func tempName(name string) string {
	var rnd [tempRandBytes]byte
	_, _ = rand.Read(rnd[:])
	return path.Join(path.Dir(name), "."+path.Base(name)+tempMarker+hex.EncodeToString(rnd[:]))
}

// isTempName reports whether base is a name tempName makes.
func isTempName(base string) bool {
	i := strings.LastIndex(base, tempMarker)
	if i < 2 || base[0] != '.' {
		return false
	}
	suffix := base[i+len(tempMarker):]
	if len(suffix) != 2*tempRandBytes {
		return false
	}
	_, err := hex.DecodeString(suffix)
	return err == nil && strings.ToLower(suffix) == suffix
}

// writeAtomic writes data to name in r through a temporary file in the
// same folder: write, fsync, rename (rename is r.Rename but for tests),
// then fsync the folder. The temporary file is removed on every failure.
func writeAtomic(r *os.Root, name string, data []byte, perm fs.FileMode, rename func(oldname, newname string) error) error {
	tmp := tempName(name)
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		return failTemp(r, tmp, err)
	}
	if err := rename(tmp, name); err != nil {
		return failTemp(r, tmp, err)
	}
	// Sync the folder so the rename itself survives a crash.
	if d, err := r.Open(path.Dir(name)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// failTemp removes the temporary file of a failed write and returns the
// write's error (joined with the removal's, if that failed too).
func failTemp(r *os.Root, tmp string, err error) error {
	if rerr := removeTemp(r, tmp); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// removeTemp removes a temporary file; one already gone is no error.
func removeTemp(r *os.Root, tmp string) error {
	if err := r.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// sweepTempFiles removes the temporary files under dir last written
// before now less tempFileStaleAfter, visiting at most maxSweepEntries
// entries and never following a symlink (dir itself included). It returns how many it removed
// and the first error met (a missing dir is none).
func sweepTempFiles(dir string, now time.Time) (int, error) {
	// dir is opened from its parent (the thread's folder), so that a dir
	// replaced by a symlink out of the thread is refused, not swept.
	parent, err := os.OpenRoot(filepath.Dir(dir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	defer parent.Close()
	r, err := parent.OpenRoot(filepath.Base(dir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	defer r.Close()
	removed, visited := 0, 0
	var first error
	err = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if first == nil {
				first = err
			}
			return nil // an unreadable folder is skipped
		}
		if visited++; visited > maxSweepEntries {
			return errSweepBound
		}
		if !d.Type().IsRegular() || !isTempName(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if err != nil || now.Sub(info.ModTime()) < tempFileStaleAfter {
			return nil
		}
		if err := removeTemp(r, p); err != nil {
			if first == nil {
				first = err
			}
			return nil
		}
		removed++
		return nil
	})
	if err != nil && first == nil {
		first = err
	}
	return removed, first
}
