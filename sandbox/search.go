package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/antlerhq/antler/vpath"
)

// errStop ends a walk early.
var errStop = errors.New("stop")

// walkEntry is one entry found by walkTree.
type walkEntry struct {
	rel     string // relative to the search root, slash-separated
	full    string // relative to the jail (for opening through the root)
	virtual string
	isDir   bool
	symlink bool
	regular bool // a regular file (not a folder, link, FIFO, socket or device)
}

// walkTree walks the folder target (which must exist and be a folder)
// through root, skipping ignored names below the start and not following
// symlinked folders. fn may return errStop or fs.SkipDir.
func walkTree(r *os.Root, target vpath.Target, fn func(e walkEntry) error) error {
	fi, err := r.Stat(target.Rel)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errNotDir
	}
	base := strings.TrimSuffix(target.Virtual, "/")
	err = fs.WalkDir(r.FS(), target.Rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == target.Rel {
				return err
			}
			return nil // unreadable entries are skipped
		}
		if p == target.Rel {
			return nil
		}
		if ignoredName(d.Name()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel := p
		if target.Rel != "." {
			rel = strings.TrimPrefix(p, target.Rel+"/")
		}
		return fn(walkEntry{
			rel: rel, full: p, virtual: base + "/" + rel,
			isDir: d.IsDir(), symlink: d.Type()&fs.ModeSymlink != 0, regular: d.Type().IsRegular(),
		})
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}
