package vpath_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/vpath"
)

// FuzzResolve checks the resolution invariants on arbitrary input: a
// resolved path is always inside one of the thread's root jails (after
// symlinks), never contains a ".." segment, and any input holding a ".."
// segment in either slash style is refused as traversal.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"/mnt/user-data/workspace/a.txt", "/mnt/user-data/../etc", `\mnt\user-data\outputs\x`,
		"/mnt/user-data-x", "/mnt/skills/public/s/SKILL.md", "/mnt/data/x", "//mnt/./user-data/workspace//",
		"/mnt/user-data/workspace/%2e%2e/x", "/mnt/acp-workspace", "/etc/passwd", "", "..", "/mnt/user-data/workspace/\x00",
		"/mnt/user-data/uploads/..\\..\\x", "/mnt/user-data/workspace/out/x",
	} {
		f.Add(s, false)
	}
	l, _ := newLayout(f)
	tp, _ := l.ThreadPaths("u1", "t1")
	must(f, os.Symlink(f.TempDir(), filepath.Join(tp.Workspace, "out")))
	f.Fuzz(func(t *testing.T, p string, write bool) {
		access := vpath.Read
		if write {
			access = vpath.Write
		}
		target, err := l.ResolveTarget("u1", "t1", p, access)
		hasDotDot := false
		for _, seg := range strings.Split(strings.ReplaceAll(p, `\`, "/"), "/") {
			if seg == ".." {
				hasDotDot = true
			}
		}
		if hasDotDot && !strings.ContainsRune(p, 0) && len(p) <= vpath.MaxPathLen {
			if err == nil {
				t.Fatalf("%q with .. resolved to %s", p, target.Host)
			}
		}
		if err != nil {
			var ve *vpath.Error
			if !errors.As(err, &ve) {
				t.Fatalf("%q: error %v is not a *vpath.Error", p, err)
			}
			return
		}
		if v := target.Virtual; v == "/mnt/user-data/workspace/out" || strings.HasPrefix(v, "/mnt/user-data/workspace/out/") {
			t.Fatalf("%q followed the escaping symlink to %s", p, target.Host)
		}
		jail := target.Root.Jail
		rel, rerr := filepath.Rel(jail, target.Host)
		if rerr != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			t.Fatalf("%q resolved outside its jail: %s (jail %s)", p, target.Host, jail)
		}
		if !strings.HasPrefix(target.Host, tp.Base) && !strings.HasPrefix(target.Host, l.Home()) &&
			!strings.HasPrefix(target.Host, l.SkillsPath()) && !underAnyMount(l, target.Host) {
			t.Fatalf("%q resolved to %s, outside every root", p, target.Host)
		}
		if write && target.Root.ReadOnly {
			t.Fatalf("%q: write resolved under a read-only root", p)
		}
	})
}

func underAnyMount(l *vpath.Layout, host string) bool {
	for _, m := range l.Mounts() {
		if host == m.HostPath || strings.HasPrefix(host, m.HostPath+"/") {
			return true
		}
	}
	return false
}
