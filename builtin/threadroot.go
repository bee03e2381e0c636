package builtin

import (
	"path/filepath"

	"github.com/antlerhq/antler/vpath"
)

// openAt is where to open a located target with os.Root: the folder, and
// the target's path relative to it.
type openAt struct {
	dir, rel string
}

// rootFor returns where to open t. A path under the thread's user-data
// roots is opened from the thread's own folder, so that a user-data,
// workspace, uploads or outputs folder replaced by a symlink to elsewhere
// (host bash can plant one) is refused, not followed: os.Root follows a
// symlink in its own path, never one below it that leaves it. Every other
// root is opened at its jail.
func rootFor(layout *vpath.Layout, user, thread string, t vpath.Target) openAt {
	if t.Root.Kind == vpath.KindUserData {
		if tp, err := layout.ThreadPaths(user, thread); err == nil {
			if rel, err := filepath.Rel(tp.Base, t.Host); err == nil && filepath.IsLocal(rel) {
				return openAt{dir: tp.Base, rel: rel}
			}
		}
	}
	return openAt{dir: t.Root.Jail, rel: t.Rel}
}
