package vpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Access is the kind of access a caller wants.
type Access int

// The access kinds.
const (
	Read Access = iota
	Write
)

// Sentinel kinds of [Error]; test with errors.Is.
var (
	// ErrTraversal: a ".." segment, or a host path (after symlinks) outside its root.
	ErrTraversal = errors.New("path traversal")
	// ErrNotAllowed: the path is under no root.
	ErrNotAllowed = errors.New("path not allowed")
	// ErrReadOnly: a write under a read-only root.
	ErrReadOnly = errors.New("read-only path")
	// ErrInvalidPath: NUL byte, relative path, or over-long path.
	ErrInvalidPath = errors.New("invalid path")
	// ErrInvalidID: a user or thread id that is not a [ValidID].
	ErrInvalidID = errors.New("invalid id")
)

// Error is a path refused by the layout. Its message is the text the
// model reads after "Error: " (DeerFlow's wording where it has one).
type Error struct {
	Kind error // one of the Err* sentinels
	Msg  string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Kind }

// TraversalMessage is DeerFlow's text for any escape attempt.
const TraversalMessage = "Access denied: path traversal detected"

func traversal() error { return &Error{Kind: ErrTraversal, Msg: TraversalMessage} }

// Target is a located virtual path.
type Target struct {
	// Virtual is the cleaned virtual path (forward slashes, no "." or
	// empty segments, no trailing slash).
	Virtual string
	// Host is the host path it maps to (lexically; see Resolve for the
	// symlink check).
	Host string
	// Root is the root the path is under.
	Root Root
	// Rel is Host relative to Root.Jail in slash form ("." for the jail
	// itself). Open it with os.OpenRoot(Root.Jail) to keep every later
	// symlink inside the jail.
	Rel string
}

// Locate maps virtual to a host path without touching the disk: it checks
// the ids, the syntax, the root and the access. Backslashes count as
// slashes (Windows-style paths from a model), so "..\\" is traversal too.
func (l *Layout) Locate(user, thread, virtual string, access Access) (Target, error) {
	if err := checkIDs(user, thread); err != nil {
		return Target{}, err
	}
	clean, err := cleanVirtual(virtual)
	if err != nil {
		return Target{}, err
	}
	roots, _ := l.Roots(user, thread)
	for _, r := range roots {
		if !under(clean, r.Virtual) {
			continue
		}
		if access == Write && r.ReadOnly {
			return Target{}, readOnlyError(r, virtual)
		}
		host := r.Host
		if rest := strings.TrimPrefix(clean, r.Virtual); rest != "" {
			host = filepath.Join(r.Host, filepath.FromSlash(rest))
		}
		rel, err := filepath.Rel(r.Jail, host)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return Target{}, traversal()
		}
		return Target{Virtual: clean, Host: host, Root: r, Rel: filepath.ToSlash(rel)}, nil
	}
	if access == Write && under(clean, l.skillsRoot) {
		return Target{}, readOnlyError(Root{Kind: KindSkills}, virtual)
	}
	return Target{}, &Error{Kind: ErrNotAllowed, Msg: fmt.Sprintf(
		"Only paths under %s/, %s/, %s/, or configured mount paths are allowed", UserData, l.skillsRoot, ACPWorkspace)}
}

func readOnlyError(r Root, p string) error {
	switch r.Kind {
	case KindSkills:
		return &Error{Kind: ErrReadOnly, Msg: "Write access to skills path is not allowed: " + p}
	case KindACP:
		return &Error{Kind: ErrReadOnly, Msg: "Write access to ACP workspace is not allowed: " + p}
	default:
		return &Error{Kind: ErrReadOnly, Msg: "Write access to read-only mount is not allowed: " + p}
	}
}

// cleanVirtual checks and normalises a virtual path.
func cleanVirtual(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", &Error{Kind: ErrInvalidPath, Msg: "Invalid path: it contains a NUL byte"}
	}
	if len(p) > maxPathLen {
		return "", &Error{Kind: ErrInvalidPath, Msg: fmt.Sprintf("Invalid path: it is longer than %d bytes", maxPathLen)}
	}
	p = strings.ReplaceAll(p, "\\", "/")
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", traversal()
		}
		if len(seg) > maxSegmentLen {
			return "", &Error{Kind: ErrInvalidPath, Msg: fmt.Sprintf("Invalid path: a file name is longer than %d bytes", maxSegmentLen)}
		}
	}
	if !strings.HasPrefix(p, "/") {
		return "", &Error{Kind: ErrNotAllowed, Msg: fmt.Sprintf(
			"Only absolute paths are allowed (for example %s/notes.txt): %s", Workspace, p)}
	}
	return path.Clean(p), nil
}

// Resolve locates virtual and then checks, with every symlink resolved
// (including dangling links and the deepest existing ancestor of a path
// that does not exist yet), that the host path stays inside its root's
// jail. It returns the host path.
//
// The check is made at call time; a symlink swapped in afterwards is only
// stopped by opening through os.Root at Target.Root.Jail, which package
// sandbox does for every file operation.
func (l *Layout) Resolve(user, thread, virtual string, access Access) (string, error) {
	t, err := l.ResolveTarget(user, thread, virtual, access)
	return t.Host, err
}

// ResolveTarget is [Layout.Resolve] returning the whole [Target].
func (l *Layout) ResolveTarget(user, thread, virtual string, access Access) (Target, error) {
	t, err := l.Locate(user, thread, virtual, access)
	if err != nil {
		return Target{}, err
	}
	if err := checkContained(t.Root.Jail, t.Host); err != nil {
		return Target{}, err
	}
	return t, nil
}

// checkContained reports a traversal error when host, with symlinks
// resolved, leaves jail (itself resolved).
func checkContained(jail, host string) error {
	realJail, err := realpath(jail, 0)
	if err != nil {
		return nil // the file operation itself will fail
	}
	real, err := realpath(host, 0)
	if err != nil {
		if errors.Is(err, errLoop) {
			return traversal()
		}
		return nil
	}
	if !underHost(real, realJail) {
		return traversal()
	}
	return nil
}

var errLoop = errors.New("too many levels of symbolic links")

// realpath resolves every symlink in p, like realpath -m: components that
// do not exist are kept as they are, and a dangling symlink is followed to
// its (missing) target.
func realpath(p string, depth int) (string, error) {
	if depth > 40 {
		return "", errLoop
	}
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		if strings.Contains(err.Error(), "too many links") || strings.Contains(err.Error(), "symbolic links") {
			return "", errLoop
		}
		return "", err
	}
	if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		return realpath(filepath.Clean(target), depth+1)
	}
	dir, base := filepath.Dir(p), filepath.Base(p)
	if dir == p {
		return p, nil
	}
	rd, err := realpath(dir, depth+1)
	if err != nil {
		return "", err
	}
	return filepath.Join(rd, base), nil
}

// underHost is under for host paths.
func underHost(p, base string) bool {
	if p == base {
		return true
	}
	if strings.HasSuffix(base, string(filepath.Separator)) {
		return strings.HasPrefix(p, base)
	}
	return strings.HasPrefix(p, base+string(filepath.Separator))
}
