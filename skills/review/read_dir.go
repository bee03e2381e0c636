package review

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/antlerhq/antler/vpath"
)

// ReadDirPath reads the package folder dir (see [ReadDir]). A folder that
// does not exist, or is not a folder, gives a snapshot with no files and
// a root_not_found or root_not_directory reader error, as DeerFlow's.
func ReadDirPath(ctx context.Context, dir string, subject Subject, limits Limits) (*Snapshot, error) {
	fi, err := os.Stat(dir)
	if s := rootProblem(fi, err, subject, limits); s != nil {
		return s, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return rootProblem(nil, err, subject, limits), nil
	}
	defer root.Close()
	return ReadDir(ctx, root, subject, limits)
}

// ReadDirAt reads the package folder rel (slash-separated) inside parent
// (see [ReadDir]). The folder is opened through parent, so a symlink
// leading out of parent is refused. A folder that does not exist, or is
// not a folder, gives a snapshot as [ReadDirPath] does. The error is
// ctx's, or why rel cannot be opened inside parent.
func ReadDirAt(ctx context.Context, parent *os.Root, rel string, subject Subject, limits Limits) (*Snapshot, error) {
	fi, err := parent.Stat(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if s := rootProblem(fi, err, subject, limits); s != nil {
		return s, nil
	}
	root, err := parent.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return ReadDir(ctx, root, subject, limits)
}

// rootProblem is the snapshot of a package folder that cannot be read
// (err from its stat, or fi not a folder), or nil for a folder.
func rootProblem(fi fs.FileInfo, err error, subject Subject, limits Limits) *Snapshot {
	switch {
	case err != nil:
		s := newSnapshot(subject, limits.withDefaults())
		s.addError(codeRootNotFound, "", "Package root does not exist")
		return s
	case !fi.IsDir():
		s := newSnapshot(subject, limits.withDefaults())
		s.addError(codeRootNotDirectory, "", "Package root is not a directory")
		return s
	}
	return nil
}

// ReadDir reads the package folder root into a snapshot. Symlinks are
// recorded with their targets and never followed; every open goes
// through root, so nothing outside it is read even when the folder
// changes during the walk. Folders are walked depth first in name order.
// Besides the limits, the walk reads at most 2×MaxFiles folder entries
// (folders included). Special files (pipes, sockets, devices) are
// reader errors, never opened. The error is ctx's when it ends.
func ReadDir(ctx context.Context, root *os.Root, subject Subject, limits Limits) (*Snapshot, error) {
	w := &dirWalk{root: root, limits: limits.withDefaults()}
	w.snap = newSnapshot(subject, w.limits)
	w.entryBudget = 2 * w.limits.MaxFiles
	err := w.walk(ctx, ".")
	if err != nil && !errors.Is(err, errStopWalk) {
		return nil, err
	}
	return w.snap.finish(), nil
}

// errStopWalk ends a walk that reached a limit.
var errStopWalk = errors.New("review: walk stopped at a limit")

type dirWalk struct {
	root        *os.Root
	limits      Limits
	snap        *Snapshot
	files       int   // files and symlinks taken
	total       int64 // bytes of files taken
	entryBudget int   // folder entries left to read
}

// walk reads the folder dir ("." for the package root) and the folders
// below it.
func (w *dirWalk) walk(ctx context.Context, dir string) error {
	entries, err := w.list(dir)
	if err != nil {
		return err
	}
	var subdirs []string
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := path.Join(dir, e.Name())
		switch t := e.Type(); {
		case t.IsDir():
			subdirs = append(subdirs, rel)
		case t&fs.ModeSymlink != 0:
			if err := w.symlink(rel); err != nil {
				return err
			}
		case t.IsRegular():
			if err := w.file(rel); err != nil {
				return err
			}
		default:
			w.snap.addError(codeReadFailed, rel, "not a regular file")
		}
	}
	for _, d := range subdirs {
		if err := w.walk(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// list returns a folder's entries sorted by name, within the entry
// budget.
func (w *dirWalk) list(dir string) ([]fs.DirEntry, error) {
	f, err := w.root.Open(dir)
	if err != nil {
		w.snap.addError(codeReadFailed, cleanRel(dir), "cannot open folder: "+vpath.PathlessError(err))
		return nil, nil
	}
	defer f.Close()
	entries, err := f.ReadDir(w.entryBudget + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		w.snap.addError(codeReadFailed, cleanRel(dir), "cannot list folder: "+vpath.PathlessError(err))
	}
	if len(entries) > w.entryBudget {
		return nil, w.tooMany()
	}
	w.entryBudget -= len(entries)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

func (w *dirWalk) tooMany() error {
	w.snap.Truncated = true
	w.snap.addError(codeTooManyFiles, "", "Package file count exceeds the review limit")
	return errStopWalk
}

// take counts one more file or symlink, rel normalised; ok is false for a
// path that escapes the package (a reader error) and err ends the walk.
func (w *dirWalk) take(rel string) (p string, ok bool, err error) {
	p, nerr := NormalizePath(rel)
	if nerr != nil {
		w.snap.addError(codePathEscaped, "", "Package entry escapes the root")
		return "", false, nil
	}
	w.files++
	if w.files > w.limits.MaxFiles {
		return "", false, w.tooMany()
	}
	return p, true, nil
}

func (w *dirWalk) symlink(rel string) error {
	p, ok, err := w.take(rel)
	if !ok {
		return err
	}
	target, rerr := w.root.Readlink(rel)
	if rerr != nil {
		target = ""
	}
	w.snap.addSymlink(p, target)
	return nil
}

func (w *dirWalk) file(rel string) error {
	p, ok, err := w.take(rel)
	if !ok {
		return err
	}
	// O_NONBLOCK: a file swapped for a pipe after the listing must not
	// block the open; the mode is checked once it is open.
	f, oerr := w.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if oerr != nil {
		w.snap.addError(codeReadFailed, p, vpath.PathlessError(oerr))
		return nil
	}
	defer f.Close()
	fi, serr := f.Stat()
	if serr != nil {
		w.snap.addError(codeStatFailed, p, vpath.PathlessError(serr))
		return nil
	}
	if !fi.Mode().IsRegular() {
		w.snap.addError(codeReadFailed, p, "not a regular file")
		return nil
	}
	size := max(fi.Size(), 0)
	w.total += size
	if w.total > w.limits.MaxTotalBytes {
		w.snap.Truncated = true
		w.snap.addError(codeTotalSize, p, "Package total size exceeds the review limit")
		return errStopWalk
	}
	if size > w.limits.MaxFileBytes {
		w.snap.addTooLarge(p, size, "File exceeds the per-file review limit")
		return nil
	}
	data, rerr := io.ReadAll(io.LimitReader(f, w.limits.MaxFileBytes+1))
	if rerr != nil {
		w.snap.addError(codeReadFailed, p, vpath.PathlessError(rerr))
		return nil
	}
	if int64(len(data)) > w.limits.MaxFileBytes { // grew since the stat
		w.snap.addTooLarge(p, int64(len(data)), "File exceeds the per-file review limit")
		return nil
	}
	w.snap.addData(p, data)
	return nil
}

// cleanRel is a folder's package path for an error ("" for the root).
func cleanRel(dir string) string {
	if dir == "." {
		return ""
	}
	return dir
}
