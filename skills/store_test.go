package skills

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

type testEnv struct {
	skillsPath, home string
	store            *Store
	logs             *bytes.Buffer
	state            map[string]bool
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	e := &testEnv{skillsPath: t.TempDir(), home: t.TempDir(), logs: &bytes.Buffer{}, state: map[string]bool{}}
	var mu sync.Mutex
	e.store = NewStore(Options{
		SkillsPath: e.skillsPath,
		Home:       e.home,
		EnabledState: func(context.Context) (map[string]bool, error) {
			mu.Lock()
			defer mu.Unlock()
			return e.state, nil
		},
		Logger: slog.New(slog.NewTextHandler(e.logs, nil)),
	})
	return e
}

func (e *testEnv) public(t *testing.T, dir, front string) {
	writeFile(t, filepath.Join(e.skillsPath, "public", dir, SkillFile), skillMD(front))
}

func (e *testEnv) custom(t *testing.T, user, dir, front string) {
	writeFile(t, filepath.Join(e.store.CustomRoot(user), dir, SkillFile), skillMD(front))
}

type brief struct {
	Name, Category, Rel, Container string
	Enabled                        bool
}

func briefs(ss []Skill) []brief {
	var out []brief
	for _, s := range ss {
		out = append(out, brief{s.Name, string(s.Category), s.RelPath, s.ContainerFile(""), s.Enabled})
	}
	return out
}

func TestStoreDiscovery(t *testing.T) {
	e := newTestEnv(t)
	e.public(t, "zeta", "name: zeta\ndescription: z")
	e.public(t, "team/alpha", "name: alpha\ndescription: a")
	e.public(t, "team/alpha/scripts/nested", "name: nested\ndescription: n") // below a package: not registered
	e.public(t, "shadowed", "name: shared\ndescription: public one")
	e.public(t, "broken", "name: broken\ndescription: Use this: when")
	writeFile(t, filepath.Join(e.skillsPath, "public", SkillFile), skillMD("name: rootfile\ndescription: r"))
	writeFile(t, filepath.Join(e.skillsPath, "custom", "old", SkillFile), skillMD("name: old\ndescription: legacy"))
	writeFile(t, filepath.Join(e.skillsPath, "custom", "shared", SkillFile), skillMD("name: shared\ndescription: legacy one"))
	e.custom(t, "alice", "shared", "name: shared\ndescription: custom one")
	e.custom(t, "alice", "mine", "name: mine\ndescription: m")
	writeFile(t, filepath.Join(e.store.CustomRoot("alice"), ".history", "x", SkillFile), skillMD("name: hidden\ndescription: h"))
	e.state["zeta"] = false

	got, err := e.store.Load(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	want := []brief{
		{"alpha", "public", "team/alpha", "/mnt/skills/public/team/alpha/SKILL.md", true},
		{"mine", "custom", "mine", "/mnt/skills/custom/mine/SKILL.md", true},
		{"old", "legacy", "old", "/mnt/skills/legacy/old/SKILL.md", true},
		{"shared", "custom", "shared", "/mnt/skills/custom/shared/SKILL.md", true},
		{"zeta", "public", "zeta", "/mnt/skills/public/zeta/SKILL.md", false},
	}
	if diff := cmp.Diff(want, briefs(got)); diff != "" {
		t.Errorf("Load mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(e.logs.String(), `values containing \":\" must be quoted`) {
		t.Errorf("malformed skill not logged with a quoting hint; logs:\n%s", e.logs)
	}
	enabled, _ := e.store.Enabled(t.Context(), "alice")
	if len(enabled) != 4 {
		t.Errorf("Enabled = %d skills, want 4", len(enabled))
	}
	// The enable state is re-read on every load.
	e.state["zeta"] = true
	enabled, _ = e.store.Enabled(t.Context(), "alice")
	if len(enabled) != 5 {
		t.Errorf("after enabling zeta: %d skills, want 5", len(enabled))
	}
}

func TestStoreUsersIsolated(t *testing.T) {
	e := newTestEnv(t)
	e.custom(t, "alice", "a-skill", "name: a-skill\ndescription: a")
	e.custom(t, "bob", "b-skill", "name: b-skill\ndescription: b")
	for user, want := range map[string]string{"alice": "a-skill", "bob": "b-skill"} {
		got, _ := e.store.Load(t.Context(), user)
		if len(got) != 1 || got[0].Name != want {
			t.Errorf("Load(%s) = %v, want only %s", user, briefs(got), want)
		}
	}
	if e.store.CustomExists("bob", "a-skill") {
		t.Error("bob sees alice's skill")
	}
	// Unsafe user ids cannot escape the users folder.
	for _, id := range []string{"../alice", "a/b", "..", ""} {
		root := e.store.CustomRoot(id)
		rel, err := filepath.Rel(filepath.Join(e.home, "users"), root)
		if err != nil || strings.HasPrefix(rel, "..") || strings.Count(rel, string(filepath.Separator)) != 2 {
			t.Errorf("CustomRoot(%q) = %s escapes users/", id, root)
		}
	}
}

func TestStoreEnsureEditable(t *testing.T) {
	e := newTestEnv(t)
	e.public(t, "pub", "name: pub\ndescription: p")
	e.custom(t, "u", "mine", "name: mine\ndescription: m")
	if err := e.store.EnsureEditable(t.Context(), "u", "mine"); err != nil {
		t.Errorf("custom: %v", err)
	}
	err := e.store.EnsureEditable(t.Context(), "u", "pub")
	if err == nil || err.Error() != "'pub' is a built-in skill. To customise it, create a new skill with the same name under skills/custom/." {
		t.Errorf("public: %v", err)
	}
	err = e.store.EnsureEditable(t.Context(), "u", "nope")
	if !errors.Is(err, ErrNotFound) || err.Error() != "Custom skill 'nope' not found." {
		t.Errorf("missing: %v", err)
	}
}

func TestSupportPath(t *testing.T) {
	tests := []struct{ path, want string }{
		{"references/a.md", ""},
		{"scripts/sub/run.py", ""},
		{"", "Supporting file path must include a filename."},
		{"scripts/", "Supporting file path must include a filename."},
		{"/etc/passwd", "Supporting file path must be relative."},
		{"C:/x", "Supporting file path must be relative."},
		{"scripts/../../x", "Supporting file path must not contain parent-directory traversal."},
		{"references//a", "Supporting file path must not contain parent-directory traversal."},
		{"other/a.md", "Supporting files must live under one of: assets, references, scripts, templates."},
		{"SKILL.md", "Supporting files must live under one of: assets, references, scripts, templates."},
		{"assets", "Supporting file path must name a file inside 'assets/'."},
		{"assets/a:b", "Supporting file path is not portable to Windows: 'assets/a:b' (reserved character ':')"},
		{"assets/con.txt", "Supporting file path is not portable to Windows: 'assets/con.txt' (reserved device name)"},
	}
	for _, tc := range tests {
		_, err := checkSupportPath(tc.path, true)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("checkSupportPath(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

func TestSupportFileSymlinkEscape(t *testing.T) {
	e := newTestEnv(t)
	e.custom(t, "u", "s", "name: s\ndescription: d")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(e.store.CustomDir("u", "s"), "scripts")); err != nil {
		t.Skip(err)
	}
	_, err := e.store.SupportFile("u", "s", "scripts/x.sh", true)
	if err == nil || err.Error() != "Supporting file path must stay within the selected support directory." {
		t.Errorf("SupportFile through symlink = %v", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f.txt")
	for _, content := range []string{"one", "two"} {
		if err := writeFileAtomic(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(name)
		if string(got) != content {
			t.Errorf("content = %q, want %q", got, content)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	fi, _ := os.Stat(name)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v", fi.Mode())
	}
	// A failed write leaves the old content and no temporary file.
	if err := writeFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Error("write into a missing folder succeeded")
	}
}

func TestStoreLockSerialises(t *testing.T) {
	s := NewStore(Options{})
	var mu sync.Mutex
	inside := 0
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			unlock := s.Lock("u", "k")
			defer unlock()
			mu.Lock()
			inside++
			n := inside
			mu.Unlock()
			if n != 1 {
				t.Errorf("%d holders inside the lock", n)
			}
			mu.Lock()
			inside--
			mu.Unlock()
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.locks) != 0 {
		t.Errorf("%d lock entries leaked", len(s.locks))
	}
}

func TestWriteFileAtomicReadersSeeWholeFiles(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	a, b := strings.Repeat("a", 1<<16), strings.Repeat("b", 1<<17)
	if err := writeFileAtomic(name, []byte(a), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for i := range 50 {
			content := a
			if i%2 == 0 {
				content = b
			}
			if err := writeFileAtomic(name, []byte(content), 0o644); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for {
		select {
		case <-done:
			wg.Wait()
			return
		default:
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(data); s != a && s != b {
			t.Fatalf("reader saw a partial file of %d bytes", len(data))
		}
	}
}

func ExampleStore() {
	root, _ := os.MkdirTemp("", "skills-example")
	defer os.RemoveAll(root)
	skillsPath, home := filepath.Join(root, "skills"), filepath.Join(root, "home")
	os.MkdirAll(filepath.Join(skillsPath, "public", "deep-research"), 0o755)
	os.WriteFile(filepath.Join(skillsPath, "public", "deep-research", SkillFile),
		[]byte("---\nname: deep-research\ndescription: Research a topic in depth\nallowed-tools: [web_search, read_file]\n---\nSteps...\n"), 0o644)

	store := NewStore(Options{SkillsPath: skillsPath, Home: home})
	list, _ := store.Enabled(context.Background(), "alice")
	for _, s := range list {
		fmt.Println(s.Name, s.Category, s.AllowedTools, s.ContainerFile(store.ContainerPath()))
	}
	// Output:
	// deep-research public [web_search read_file] /mnt/skills/public/deep-research/SKILL.md
}
