package vpath_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/vpath"
)

func newLayout(t testing.TB) (*vpath.Layout, string) {
	t.Helper()
	home := t.TempDir()
	skills := filepath.Join(t.TempDir(), "skills")
	mnt := t.TempDir()
	l, err := vpath.New(vpath.Options{
		Home:       home,
		SkillsPath: skills,
		Mounts: []config.Mount{
			{HostPath: mnt, ContainerPath: "/mnt/data", ReadOnly: true},
			{HostPath: filepath.Join(mnt, "rw"), ContainerPath: "/mnt/scratch"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.EnsureThreadDirs("u1", "t1"); err != nil {
		t.Fatal(err)
	}
	return l, home
}

func TestValidID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"t1", true}, {"A-b_9", true}, {strings.Repeat("a", 64), true},
		{"", false}, {".", false}, {"..", false}, {"a.b", false}, {"a/b", false},
		{`a\b`, false}, {"a b", false}, {strings.Repeat("a", 65), false}, {"é", false}, {"a\x00", false},
	} {
		if got := vpath.ValidID(tc.id); got != tc.want {
			t.Errorf("ValidID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
	if got := vpath.SafeUserID("alice@example.com"); !strings.HasPrefix(got, "sanitized-") || len(got) != len("sanitized-")+16 || !vpath.ValidID(got) {
		t.Errorf("SafeUserID = %q", got)
	}
	if got := vpath.SafeUserID("bob"); got != "bob" {
		t.Errorf("SafeUserID(bob) = %q", got)
	}
}

// Virtual↔host mapping incl. trailing slashes,
// Windows separators, sibling-prefix non-matching, bare base at end of
// output.
func TestVirtualHostMapping(t *testing.T) {
	l, home := newLayout(t)
	tp, _ := l.ThreadPaths("u1", "t1")
	if want := filepath.Join(home, "users", "u1", "threads", "t1", "user-data", "workspace"); tp.Workspace != want {
		t.Fatalf("workspace = %s, want %s", tp.Workspace, want)
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"root", "/mnt/user-data/workspace", tp.Workspace},
		{"trailing slash", "/mnt/user-data/workspace/", tp.Workspace},
		{"file", "/mnt/user-data/outputs/a/b.txt", filepath.Join(tp.Outputs, "a", "b.txt")},
		{"windows separators", `\mnt\user-data\uploads\x.csv`, filepath.Join(tp.Uploads, "x.csv")},
		{"mixed separators", `/mnt/user-data\workspace/dir\f`, filepath.Join(tp.Workspace, "dir", "f")},
		{"double slashes and dots", "//mnt//user-data/./workspace//f", filepath.Join(tp.Workspace, "f")},
		{"acp", "/mnt/acp-workspace/r.md", filepath.Join(tp.ACPWorkspace, "r.md")},
		{"mount", "/mnt/data/x", filepath.Join(l.Mounts()[0].HostPath, "x")},
		{"custom skills", "/mnt/skills/custom/s/SKILL.md", filepath.Join(home, "users", "u1", "skills", "custom", "s", "SKILL.md")},
		{"public skills", "/mnt/skills/public/s/SKILL.md", filepath.Join(l.SkillsPath(), "public", "s", "SKILL.md")},
		{"encoded dots are a name", "/mnt/user-data/workspace/%2e%2e/x", filepath.Join(tp.Workspace, "%2e%2e", "x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.Resolve("u1", "t1", tc.in, vpath.Read)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Resolve(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
	for _, tc := range []string{"/mnt/user-data-x/a", "/mnt/user-data/workspace-backup/a", "/mnt/skillsX/a", "/mnt/acp-workspace2"} {
		if _, err := l.Resolve("u1", "t1", tc, vpath.Read); !errors.Is(err, vpath.ErrNotAllowed) {
			t.Errorf("Resolve(%q) err = %v, want ErrNotAllowed", tc, err)
		}
	}

	// Host → virtual masking.
	for _, tc := range []struct {
		name, in, want string
	}{
		{"file", "cat " + tp.Workspace + "/a.txt", "cat /mnt/user-data/workspace/a.txt"},
		{"bare base at end", "cwd is " + tp.Outputs, "cwd is /mnt/user-data/outputs"},
		{"bare base trailing slash", tp.Uploads + "/", "/mnt/user-data/uploads/"},
		{"user-data parent", "ls " + tp.UserData + ":", "ls /mnt/user-data:"},
		{"sibling thread not masked", tp.Base + "-backup/x", tp.Base + "-backup/x"},
		{"sibling root under user-data", tp.Workspace + "-old/x", "/mnt/user-data/workspace-old/x"},
		{"quoted", `"` + tp.Workspace + `/b c"`, `"/mnt/user-data/workspace/b c"`},
		{"two paths", tp.Workspace + " " + tp.ACPWorkspace + "/x", "/mnt/user-data/workspace /mnt/acp-workspace/x"},
		{"longer prefix mid-path", "/x" + tp.Workspace, "/x" + tp.Workspace},
	} {
		t.Run("mask/"+tc.name, func(t *testing.T) {
			if got := l.Mask("u1", "t1", tc.in); got != tc.want {
				t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if got, ok := l.ToVirtual("u1", "t1", filepath.Join(tp.Outputs, "r.pdf")); !ok || got != "/mnt/user-data/outputs/r.pdf" {
		t.Errorf("ToVirtual = %q, %v", got, ok)
	}
	if _, ok := l.ToVirtual("u1", "t1", "/etc/passwd"); ok {
		t.Error("ToVirtual(/etc/passwd) ok")
	}
	if got := l.ToHostText("u1", "t1", "python /mnt/user-data/workspace/a.py > /mnt/user-data/outputs/o.txt; ls /mnt/user-data-x /mnt/user-data"); got != "python "+tp.Workspace+"/a.py > "+tp.Outputs+"/o.txt; ls /mnt/user-data-x "+tp.UserData {
		t.Errorf("ToHostText = %q", got)
	}
}

// Traversal (.., backslash) rejected; bare
// /mnt/user-data rejected; skills writes rejected; read-only mounts
// respected.
func TestTraversalAndAccess(t *testing.T) {
	l, _ := newLayout(t)
	for _, tc := range []struct {
		name, in string
		access   vpath.Access
		kind     error
		msg      string
	}{
		{"dotdot", "/mnt/user-data/workspace/../../etc/passwd", vpath.Read, vpath.ErrTraversal, vpath.TraversalMessage},
		{"dotdot backslash", `/mnt/user-data/workspace\..\..\x`, vpath.Read, vpath.ErrTraversal, vpath.TraversalMessage},
		{"dotdot at end", "/mnt/user-data/workspace/..", vpath.Read, vpath.ErrTraversal, vpath.TraversalMessage},
		{"bare user-data", "/mnt/user-data", vpath.Read, vpath.ErrNotAllowed, "Only paths under /mnt/user-data/, /mnt/skills/, /mnt/acp-workspace/, or configured mount paths are allowed"},
		{"bare user-data slash", "/mnt/user-data/", vpath.Read, vpath.ErrNotAllowed, ""},
		{"host path", "/etc/passwd", vpath.Read, vpath.ErrNotAllowed, ""},
		{"relative", "workspace/a", vpath.Read, vpath.ErrNotAllowed, ""},
		{"skills write", "/mnt/skills/public/x/SKILL.md", vpath.Write, vpath.ErrReadOnly, "Write access to skills path is not allowed: /mnt/skills/public/x/SKILL.md"},
		{"custom skills write", "/mnt/skills/custom/x/SKILL.md", vpath.Write, vpath.ErrReadOnly, ""},
		{"acp write", "/mnt/acp-workspace/x", vpath.Write, vpath.ErrReadOnly, "Write access to ACP workspace is not allowed: /mnt/acp-workspace/x"},
		{"ro mount write", "/mnt/data/x", vpath.Write, vpath.ErrReadOnly, "Write access to read-only mount is not allowed: /mnt/data/x"},
		{"nul", "/mnt/user-data/workspace/a\x00b", vpath.Read, vpath.ErrInvalidPath, ""},
		{"long segment", "/mnt/user-data/workspace/" + strings.Repeat("a", 256), vpath.Read, vpath.ErrInvalidPath, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := l.Resolve("u1", "t1", tc.in, tc.access)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
			if tc.msg != "" && err.Error() != tc.msg {
				t.Errorf("msg = %q, want %q", err.Error(), tc.msg)
			}
		})
	}
	// Reads of read-only roots and writes of a read-write mount work.
	for _, p := range []string{"/mnt/skills/public/x", "/mnt/acp-workspace/x", "/mnt/data/x"} {
		if _, err := l.Resolve("u1", "t1", p, vpath.Read); err != nil {
			t.Errorf("read %s: %v", p, err)
		}
	}
	if _, err := l.Resolve("u1", "t1", "/mnt/scratch/x", vpath.Write); err != nil {
		t.Errorf("write rw mount: %v", err)
	}
}

func TestResolveSymlinks(t *testing.T) {
	l, _ := newLayout(t)
	tp, _ := l.ThreadPaths("u1", "t1")
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600))
	must(t, os.Symlink(outside, filepath.Join(tp.Workspace, "out")))
	must(t, os.Symlink(filepath.Join(outside, "nope", "x"), filepath.Join(tp.Workspace, "dangling")))
	must(t, os.Symlink(filepath.Join(tp.Outputs, "o.txt"), filepath.Join(tp.Workspace, "to-outputs")))
	must(t, os.Symlink("loop2", filepath.Join(tp.Workspace, "loop1")))
	must(t, os.Symlink("loop1", filepath.Join(tp.Workspace, "loop2")))
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"/mnt/user-data/workspace/out/secret", false},
		{"/mnt/user-data/workspace/out/new-file", false},
		{"/mnt/user-data/workspace/out", false},
		{"/mnt/user-data/workspace/dangling", false},
		{"/mnt/user-data/workspace/dangling/deeper", false},
		{"/mnt/user-data/workspace/loop1", false},
		{"/mnt/user-data/workspace/to-outputs", true},
		{"/mnt/user-data/workspace/new/dir/file", true},
	} {
		_, err := l.Resolve("u1", "t1", tc.in, vpath.Write)
		if tc.ok && err != nil {
			t.Errorf("%s: %v", tc.in, err)
		}
		if !tc.ok && !errors.Is(err, vpath.ErrTraversal) {
			t.Errorf("%s: err = %v, want traversal", tc.in, err)
		}
	}
}

func TestNewRejectsBadMounts(t *testing.T) {
	for _, cp := range []string{"relative", "/", "/mnt/user-data", "/mnt/user-data/workspace/x", "/mnt", "/mnt/skills/x", "/a/../b"} {
		_, err := vpath.New(vpath.Options{Home: t.TempDir(), Mounts: []config.Mount{{HostPath: "/tmp", ContainerPath: cp}}})
		if err == nil {
			t.Errorf("mount %q accepted", cp)
		}
	}
}

func TestIDsChecked(t *testing.T) {
	l, _ := newLayout(t)
	for _, ids := range [][2]string{{"..", "t1"}, {"u1", ".."}, {"u1", "a/b"}, {"", "t"}, {"u", strings.Repeat("x", 65)}} {
		if _, err := l.Resolve(ids[0], ids[1], "/mnt/user-data/workspace/a", vpath.Read); !errors.Is(err, vpath.ErrInvalidID) {
			t.Errorf("ids %q: err = %v", ids, err)
		}
	}
}

func TestChildRoots(t *testing.T) {
	l, _ := newLayout(t)
	var got []string
	for _, r := range l.ChildRoots("u1", "t1", "/mnt/skills/") {
		got = append(got, r.Virtual)
	}
	want := "/mnt/skills/custom /mnt/skills/integrations /mnt/skills/legacy /mnt/skills/public"
	if strings.Join(got, " ") != want {
		t.Errorf("ChildRoots = %v", got)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func BenchmarkResolve(b *testing.B) {
	l, _ := newLayout(b)
	tp, _ := l.ThreadPaths("u1", "t1")
	must(b, os.MkdirAll(filepath.Join(tp.Workspace, "src", "pkg"), 0o755))
	for _, bc := range []struct{ name, path string }{
		{"existing", "/mnt/user-data/workspace/src/pkg"},
		{"new-file", "/mnt/user-data/workspace/src/pkg/new/file.go"},
		{"refused", "/mnt/user-data/workspace/../../etc/passwd"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				_, _ = l.Resolve("u1", "t1", bc.path, vpath.Write)
			}
		})
	}
	b.Run("locate-only", func(b *testing.B) {
		for b.Loop() {
			_, _ = l.Locate("u1", "t1", "/mnt/user-data/workspace/src/pkg/file.go", vpath.Read)
		}
	})
}

func BenchmarkMask(b *testing.B) {
	l, _ := newLayout(b)
	tp, _ := l.ThreadPaths("u1", "t1")
	var sb strings.Builder
	for i := 0; i < 100; i++ {
		sb.WriteString(tp.Workspace + "/src/file.go:12: some matched text here\n")
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = l.Mask("u1", "t1", text)
	}
}

func BenchmarkMasker(b *testing.B) {
	l, _ := newLayout(b)
	tp, _ := l.ThreadPaths("u1", "t1")
	var sb strings.Builder
	for i := 0; i < 100; i++ {
		sb.WriteString(tp.Workspace + "/src/file.go:12: some matched text here\n")
	}
	text := sb.String()
	m := l.Masker("u1", "t1")
	if m.Mask(text) != l.Mask("u1", "t1", text) {
		b.Fatal("Masker and Mask differ")
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = m.Mask(text)
	}
}

// TestResolveRefusesASymlinkedUserDataFolder: a thread's user-data (or
// workspace, or ACP workspace) folder replaced by a symlink out of the
// thread, as host bash or an MCP stdio server can plant, is refused: the
// jail of those roots is the thread's own folder, not user-data itself.
func TestResolveRefusesASymlinkedUserDataFolder(t *testing.T) {
	for _, tc := range []struct {
		name, replace, virtual string
	}{
		{"user-data", "user-data", "/mnt/user-data/workspace/secret"},
		{"workspace", "user-data/workspace", "/mnt/user-data/workspace/secret"},
		{"outputs", "user-data/outputs", "/mnt/user-data/outputs/secret"},
		{"acp workspace", "acp-workspace", "/mnt/acp-workspace/secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := newLayout(t)
			tp, _ := l.ThreadPaths("u1", "t1")
			outside := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(outside, "workspace"), 0o755))
			must(t, os.MkdirAll(filepath.Join(outside, "outputs"), 0o755))
			must(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600))
			must(t, os.WriteFile(filepath.Join(outside, "workspace", "secret"), []byte("s"), 0o600))
			victim := filepath.Join(tp.Base, filepath.FromSlash(tc.replace))
			must(t, os.RemoveAll(victim))
			must(t, os.Symlink(outside, victim))
			target, err := l.ResolveTarget("u1", "t1", tc.virtual, vpath.Read)
			if !errors.Is(err, vpath.ErrTraversal) {
				t.Fatalf("err = %v, want traversal", err)
			}
			// The os.Root the sandbox opens refuses it too, even if the
			// symlink is planted after the check.
			target, err = l.Locate("u1", "t1", tc.virtual, vpath.Read)
			if err != nil {
				t.Fatal(err)
			}
			r, err := os.OpenRoot(target.Root.Jail)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if f, err := r.Open(target.Rel); err == nil {
				f.Close()
				t.Fatalf("os.Root at %s opened %s through the symlink", target.Root.Jail, target.Rel)
			}
		})
	}
}
