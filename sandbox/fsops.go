package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/antlerhq/antler/vpath"
)

// All file access goes through os.Root opened at the target's jail: the
// kernel-level walk refuses any symlink or ".." that would leave the jail,
// including a symlink swapped in after vpath checked the path.

var (
	errIsDir  = errors.New("is a directory")
	errNotDir = errors.New("not a directory")
)

// errClass is how a tool words a file-system error.
type errClass int

const (
	classOther errClass = iota
	classNotExist
	classPermission
	classIsDir
	classNotDir
	classEscape
)

func classify(err error) errClass {
	switch {
	case err == nil:
		return classOther
	case isEscape(err):
		return classEscape
	case errors.Is(err, errIsDir), errors.Is(err, syscall.EISDIR):
		return classIsDir
	case errors.Is(err, errNotDir):
		return classNotDir
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return classNotExist
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return classPermission
	}
	return classOther
}

// isEscape reports whether err is os.Root refusing a path that leaves
// the root (the error value is not exported; its text is stable) or a
// symlink loop.
func isEscape(err error) bool {
	if errors.Is(err, vpath.ErrTraversal) || errors.Is(err, syscall.ELOOP) {
		return true
	}
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// openJail opens the jail of t.
func openJail(t vpath.Target) (*os.Root, error) {
	return os.OpenRoot(t.Root.Jail)
}

// readTarget reads the file at t. A directory is errIsDir.
func readTarget(t vpath.Target) ([]byte, error) {
	f, err := openTargetFile(t)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// openTargetFile opens the file at t for reading. A directory is
// errIsDir.
func openTargetFile(t vpath.Target) (*os.File, error) {
	r, err := openJail(t)
	if err != nil {
		return nil, err
	}
	defer r.Close() // the file stays open
	f, err := r.Open(t.Rel)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, errIsDir
	}
	return f, nil
}

// statTarget stats t, following symlinks inside the jail.
func statTarget(t vpath.Target) (fs.FileInfo, error) {
	r, err := openJail(t)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Stat(t.Rel)
}

// writeTarget writes data to t: atomically (temporary file in the same
// folder, fsync, rename) unless appending. Parent folders are created.
func writeTarget(t vpath.Target, data []byte, appendMode bool) error {
	if t.Rel == "." {
		return errIsDir
	}
	r, err := openJail(t)
	if err != nil {
		return err
	}
	defer r.Close()
	if dir := path.Dir(t.Rel); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	perm := fs.FileMode(0o644)
	if fi, err := r.Stat(t.Rel); err == nil {
		if fi.IsDir() {
			return errIsDir
		}
		perm = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if appendMode {
		f, err := r.OpenFile(t.Rel, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
		if err != nil {
			return err
		}
		_, werr := f.Write(data)
		return errors.Join(werr, f.Close())
	}
	return writeAtomic(r, t.Rel, data, perm, r.Rename)
}

// unexpected formats an error the tool does not word itself, with the
// thread's host paths masked: "{Type}: {message}".
func unexpected(sb *Sandbox, err error) string {
	var pe *fs.PathError
	kind := fmt.Sprintf("%T", err)
	if errors.As(err, &pe) {
		kind = "OSError"
		if errno, ok := pe.Err.(syscall.Errno); ok {
			return sb.Mask(fmt.Sprintf("%s: [Errno %d] %s", kind, int(errno), errno.Error()))
		}
		return sb.Mask(kind + ": " + pe.Err.Error())
	}
	return sb.Mask(kind + ": " + err.Error())
}
