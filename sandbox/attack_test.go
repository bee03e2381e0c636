package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/antlerhq/antler/vpath"
)

const (
	outsideSecret = "TOPSECRET-outside"
	otherSecret   = "OTHERTHREAD-secret"
	pwned         = "PWNED-by-attack"
)

// attackFixture is u1/t1 with an outside folder, another thread of the
// same user, another user's thread of the same id, and hostile symlinks
// in u1/t1.
type attackFixture struct {
	*fixture
	outside string
	own     vpath.ThreadPaths
	other   vpath.ThreadPaths // u1/t2
	foreign vpath.ThreadPaths // u2/t1
}

func newAttackFixture(t *testing.T) *attackFixture {
	f := newFixture(t, fixtureOpts{rbw: ptr(false)})
	a := &attackFixture{fixture: f, outside: t.TempDir()}
	a.own = f.paths(t, "u1", "t1")
	a.other = f.paths(t, "u1", "t2")
	a.foreign = f.paths(t, "u2", "t1")
	mustDo(t, os.WriteFile(filepath.Join(a.outside, "secret.txt"), []byte(outsideSecret+"\n"), 0o644))
	mustDo(t, os.MkdirAll(filepath.Join(a.outside, "secret-dir"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(a.outside, "secret-dir", "inner.txt"), []byte(outsideSecret+"\n"), 0o644))
	for _, tp := range []vpath.ThreadPaths{a.other, a.foreign} {
		mustDo(t, os.WriteFile(filepath.Join(tp.Workspace, "other.txt"), []byte(otherSecret+"\n"), 0o644))
	}
	mustDo(t, os.WriteFile(filepath.Join(a.own.Workspace, "a.txt"), []byte("mine\n"), 0o644))
	links := map[string]string{
		filepath.Join(a.own.Workspace, "esc-dir"):         a.outside,
		filepath.Join(a.own.Workspace, "esc-file"):        filepath.Join(a.outside, "secret.txt"),
		filepath.Join(a.own.Workspace, "dangling"):        filepath.Join(a.outside, "created-through-link.txt"),
		filepath.Join(a.own.Workspace, "rel-esc"):         strings.Repeat("../", 20),
		filepath.Join(a.own.Workspace, "to-other-thread"): a.other.UserData,
		filepath.Join(a.own.Workspace, "to-foreign-user"): a.foreign.Workspace,
		filepath.Join(a.own.Uploads, "etc-link"):          "/etc",
		filepath.Join(a.own.Outputs, "chain1"):            filepath.Join(a.own.Outputs, "chain2"),
		filepath.Join(a.own.Outputs, "chain2"):            a.outside,
	}
	for link, target := range links {
		mustDo(t, os.Symlink(target, link))
	}
	return a
}

// hostilePaths returns the attack table. literal marks paths that are
// not escapes at all but odd literal names inside the workspace (encoded
// forms): a write may create them there; everything else must fail.
func (a *attackFixture) hostilePaths() []struct {
	name, path string
	literal    bool
} {
	W := "/mnt/user-data/workspace"
	type hp = struct {
		name, path string
		literal    bool
	}
	return []hp{
		{"dotdot deep", W + "/../../../../etc/passwd", false},
		{"dotdot from user-data", "/mnt/user-data/../../etc/passwd", false},
		{"dotdot at end", W + "/..", false},
		{"dotdot only", "..", false},
		{"relative dotdot", "../../etc/passwd", false},
		{"backslash dotdot", W + `\..\..\..\etc\passwd`, false},
		{"all backslashes", `\mnt\user-data\workspace\..\..\x`, false},
		{"dot then dotdot", W + "/./../../x", false},
		{"doubled slashes dotdot", W + "//..//..//x", false},
		{"dotdot mid", W + "/sub/../../../x", false},
		{"dotdot into other thread", W + "/../../../t2/user-data/workspace/other.txt", false},
		{"skills dotdot", "/mnt/skills/public/../../../etc/passwd", false},
		{"acp dotdot", "/mnt/acp-workspace/../user-data/workspace/a.txt", false},
		{"percent-encoded dots", W + "/%2e%2e/%2e%2e/etc/passwd", true},
		{"encoded slash", W + "/..%2f..%2fetc%2fpasswd", true},
		{"double-encoded", W + "/%252e%252e/x", true},
		{"encoded backslash", W + "/..%5c..%5cx", true},
		{"triple dots", W + "/.../x", true},
		{"sibling prefix root", "/mnt/user-data-x/secret", false},
		{"sibling prefix backup", "/mnt/user-data-backup", false},
		{"sibling of workspace", "/mnt/user-data/workspace-x/a", false},
		{"sibling of outputs", "/mnt/user-data/outputs2/a", false},
		{"sibling of skills", "/mnt/skillsX/a", false},
		{"sibling of acp", "/mnt/acp-workspace-evil/a", false},
		{"bare user-data", "/mnt/user-data", false},
		{"bare mnt", "/mnt", false},
		{"root", "/", false},
		{"etc passwd", "/etc/passwd", false},
		{"outside host file", filepath.Join(a.outside, "secret.txt"), false},
		{"own host path", filepath.Join(a.own.Workspace, "a.txt"), false},
		{"other thread host path", filepath.Join(a.other.Workspace, "other.txt"), false},
		{"other user host path", filepath.Join(a.foreign.Workspace, "other.txt"), false},
		{"tilde", "~/.ssh/id_rsa", false},
		{"file url", "file:///etc/passwd", false},
		{"empty", "", false},
		{"leading space", " " + W + "/a.txt", false},
		{"symlink dir out", W + "/esc-dir/secret.txt", false},
		{"symlink dir out itself", W + "/esc-dir", false},
		{"symlink dir out nested", W + "/esc-dir/secret-dir/inner.txt", false},
		{"symlink file out", W + "/esc-file", false},
		{"dangling symlink out", W + "/dangling", false},
		{"relative symlink out", W + "/rel-esc/etc/passwd", false},
		{"symlink to other thread", W + "/to-other-thread/workspace/other.txt", false},
		{"symlink to other user", W + "/to-foreign-user/other.txt", false},
		{"symlink to etc", "/mnt/user-data/uploads/etc-link/passwd", false},
		{"symlink chain out", "/mnt/user-data/outputs/chain1/secret.txt", false},
		{"nul byte", W + "/a\x00b", false},
		{"nul then dotdot", W + "/\x00/../../etc", false},
		{"very long name", W + "/" + strings.Repeat("a", 300), false},
		{"very long path", W + strings.Repeat("/abcdefgh", 600), false},
	}
}

// TestAttackTable feeds every hostile path to every path-taking tool and
// proves that nothing outside the thread's folders is read, listed or
// written, and that each call gets an "Error: ..." result.
func TestAttackTable(t *testing.T) {
	a := newAttackFixture(t)
	paths := a.hostilePaths()
	if len(paths) < 40 {
		t.Fatalf("only %d hostile paths", len(paths))
	}
	before := snapshot(t, a.outside, a.other.Base, a.foreign.Base)
	leaks := []string{outsideSecret, otherSecret, a.outside, a.home, "root:x:0:0"}
	tools := []struct {
		name  string
		args  func(p string) map[string]any
		write bool
	}{
		{"ls", func(p string) map[string]any { return map[string]any{"path": p} }, false},
		{"read_file", func(p string) map[string]any { return map[string]any{"path": p} }, false},
		{"glob", func(p string) map[string]any { return map[string]any{"path": p, "pattern": "**", "include_dirs": true} }, false},
		{"grep", func(p string) map[string]any { return map[string]any{"path": p, "pattern": "SECRET|root"} }, false},
		{"write_file", func(p string) map[string]any { return map[string]any{"path": p, "content": pwned} }, true},
		{"write_file_append", func(p string) map[string]any { return map[string]any{"path": p, "content": pwned, "append": true} }, true},
		{"str_replace", func(p string) map[string]any {
			return map[string]any{"path": p, "old_str": "SECRET", "new_str": pwned, "replace_all": true}
		}, true},
	}
	for _, tl := range tools {
		for _, hp := range paths {
			t.Run(tl.name+"/"+hp.name, func(t *testing.T) {
				name := strings.TrimSuffix(tl.name, "_append")
				res := a.call(t, "u1", "t1", name, tl.args(hp.path))
				got := res.TextContent()
				for _, l := range leaks {
					if strings.Contains(got, l) {
						t.Fatalf("result leaks %q: %q", l, got)
					}
				}
				if hp.literal && tl.write && name == "write_file" {
					if got != "OK" {
						t.Fatalf("literal name write: %q", got)
					}
					return
				}
				if !res.IsError || !strings.HasPrefix(got, "Error: ") {
					t.Fatalf("got %q (IsError %v), want an Error: result", got, res.IsError)
				}
			})
		}
	}
	after := snapshot(t, a.outside, a.other.Base, a.foreign.Base)
	if len(before) != len(after) {
		t.Errorf("files outside the thread changed: before %d, after %d", len(before), len(after))
	}
	for p, c := range before {
		if after[p] != c {
			t.Errorf("%s changed: %q -> %q", p, c, after[p])
		}
	}
	// Every file holding the attack payload is inside u1/t1's workspace.
	for _, root := range []string{a.home, a.outside} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
				return nil
			}
			if b, _ := os.ReadFile(p); strings.Contains(string(b), pwned) && !strings.HasPrefix(p, a.own.Workspace+string(filepath.Separator)) {
				t.Errorf("payload written outside the workspace: %s", p)
			}
			return nil
		})
	}
	// Listings and searches of the thread's own roots do not follow the
	// escaping symlinks.
	for _, root := range []string{"/mnt/user-data/workspace", "/mnt/user-data/uploads", "/mnt/user-data/outputs"} {
		for _, out := range []string{
			a.text(t, "u1", "t1", "ls", map[string]any{"path": root}),
			a.text(t, "u1", "t1", "glob", map[string]any{"path": root, "pattern": "**", "include_dirs": true}),
			a.text(t, "u1", "t1", "grep", map[string]any{"path": root, "pattern": "SECRET|root:"}),
		} {
			for _, l := range []string{outsideSecret, otherSecret, "secret.txt", "inner.txt", "other.txt", "root:x:0:0", a.home} {
				if strings.Contains(out, l) {
					t.Errorf("listing of %s shows %q:\n%s", root, l, out)
				}
			}
		}
	}
}

// snapshot maps every regular file under roots to its content.
func snapshot(t *testing.T, roots ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range roots {
		_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				b, _ := os.ReadFile(p)
				out[p] = string(b)
			}
			return nil
		})
	}
	return out
}

// TestSymlinkSwappedAfterValidation checks the window between the path
// check and the file operation: a folder replaced by a symlink to the
// outside after Resolve is still not followed, because the operation goes
// through os.Root.
func TestSymlinkSwappedAfterValidation(t *testing.T) {
	a := newAttackFixture(t)
	sb, err := a.provider.Acquire(t.Context(), "u1", "t1")
	mustDo(t, err)
	swap := filepath.Join(a.own.Workspace, "swap")
	mustDo(t, os.Mkdir(swap, 0o755))
	mustDo(t, os.WriteFile(filepath.Join(swap, "secret.txt"), []byte("inside\n"), 0o644))
	target, err := sb.Resolve("/mnt/user-data/workspace/swap/secret.txt", vpath.Write)
	mustDo(t, err)
	// The attacker swaps the folder for a link out of the thread.
	mustDo(t, os.RemoveAll(swap))
	mustDo(t, os.Symlink(a.outside, swap))
	if _, err := readTarget(target); classify(err) != classEscape {
		t.Fatalf("read through swapped link: err = %v", err)
	}
	if err := writeTarget(target, []byte(pwned), false); classify(err) != classEscape {
		t.Fatalf("write through swapped link: err = %v", err)
	}
	if err := writeTarget(target, []byte(pwned), true); classify(err) != classEscape {
		t.Fatalf("append through swapped link: err = %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(a.outside, "secret.txt")); string(b) != outsideSecret+"\n" {
		t.Fatalf("outside file changed: %q", b)
	}

	// The same race, live: one goroutine flips the folder between a real
	// folder and a link out while the tools read and write through it.
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			_ = os.Remove(swap)
			_ = os.Mkdir(swap, 0o755)
			_ = os.RemoveAll(swap)
			_ = os.Symlink(a.outside, swap)
		}
	}()
	for i := 0; i < 300; i++ {
		out := a.text(t, "u1", "t1", "write_file", map[string]any{"path": "/mnt/user-data/workspace/swap/secret.txt", "content": pwned})
		if out != "OK" && !strings.HasPrefix(out, "Error: ") {
			t.Errorf("unexpected %q", out)
		}
		if got := a.text(t, "u1", "t1", "read_file", map[string]any{"path": "/mnt/user-data/workspace/swap/secret.txt"}); strings.Contains(got, outsideSecret) {
			t.Fatalf("read the outside file through a swapped link: %q", got)
		}
	}
	stop.Store(true)
	wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(a.outside, "secret.txt")); string(b) != outsideSecret+"\n" {
		t.Fatalf("outside file changed: %q", b)
	}
	ents, _ := os.ReadDir(a.outside)
	for _, e := range ents {
		if e.Name() != "secret.txt" && e.Name() != "secret-dir" {
			t.Errorf("file created outside: %s", e.Name())
		}
	}
}
