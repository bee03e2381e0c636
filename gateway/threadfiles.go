package gateway

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/antlerhq/antler/vpath"
)

// errOutsideThread is a thread file operation refused because a path, or
// a symlink on it, leads out of the thread's folder. Agent tools (host
// bash, an MCP stdio server) can plant such symlinks, so the gateway opens
// every thread file through os.Root at the thread's folder.
var errOutsideThread = errors.New("refused to leave the thread's folder")

// threadDir is one thread's folder ({home}/users/{user}/threads/{thread})
// opened as an os.Root: no path opened through it, and no symlink met on
// the way, leaves it. Close it when done.
type threadDir struct {
	root     *os.Root
	tp       vpath.ThreadPaths
	threadID string
}

// openThreadDir opens the folder of (user, thread). With create, the
// folder and its user-data/{workspace,uploads,outputs} and acp-workspace
// subfolders are made first, the subfolders through the root (a symlinked
// user-data is refused, not followed). Without create, a thread whose
// folder does not exist yet yields an error wrapping fs.ErrNotExist.
func (s *Server) openThreadDir(user, thread string, create bool) (*threadDir, error) {
	tp, err := s.layout.ThreadPaths(user, thread)
	if err != nil {
		return nil, err
	}
	if create {
		if err := os.MkdirAll(tp.Base, 0o755); err != nil {
			return nil, fmt.Errorf("create the thread's folder: %w", err)
		}
	}
	root, err := os.OpenRoot(tp.Base)
	if err != nil {
		return nil, err
	}
	d := &threadDir{root: root, tp: tp, threadID: thread}
	if create {
		for _, host := range []string{tp.Workspace, tp.Uploads, tp.Outputs, tp.ACPWorkspace} {
			rel, err := d.rel(host)
			if err == nil {
				err = root.MkdirAll(rel, 0o755)
			}
			if err != nil {
				root.Close()
				return nil, rootError(fmt.Errorf("create the thread's folder %s: %w", filepath.Base(host), err))
			}
		}
	}
	return d, nil
}

// Close releases the root.
func (d *threadDir) Close() { d.root.Close() }

// rel is host (a path inside the thread's folder) relative to the root,
// in the root's form.
func (d *threadDir) rel(host string) (string, error) {
	rel, err := filepath.Rel(d.tp.Base, host)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s: %w", host, errOutsideThread)
	}
	return rel, nil
}

// openUploads opens the thread's folder (creating it with create) and
// returns it with the name of its uploads folder in it; fs.ErrNotExist
// when either is missing. The caller closes d.
func (s *Server) openUploads(user, thread string, create bool) (d *threadDir, uploads string, err error) {
	if d, err = s.openThreadDir(user, thread, create); err != nil {
		return nil, "", err
	}
	if uploads, err = d.uploads(); err != nil {
		d.Close()
		return nil, "", err
	}
	return d, uploads, nil
}

// uploads returns the uploads folder relative to the root after checking
// that user-data and uploads are real folders, not symlinks (even to a
// place inside the thread: nothing Antler does makes one).
func (d *threadDir) uploads() (string, error) {
	for _, host := range []string{d.tp.UserData, d.tp.Uploads} {
		rel, err := d.rel(host)
		if err != nil {
			return "", err
		}
		fi, err := d.root.Lstat(rel)
		if err != nil {
			return "", rootError(err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
			return "", fmt.Errorf("%s is a symbolic link or not a folder: %w", filepath.ToSlash(rel), errOutsideThread)
		}
	}
	return d.rel(d.tp.Uploads)
}

// rootError marks an os.Root refusal (a path or symlink escaping the
// root; the standard library has no sentinel for it) as errOutsideThread.
func rootError(err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%w: %w", errOutsideThread, err)
	}
	return err
}
