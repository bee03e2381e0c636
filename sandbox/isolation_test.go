package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestTwoUsersIsolated gives two users a thread each — with the same
// thread id — and proves that no tool of one sees or changes the other's
// files, whether addressed by virtual path, by host path, or by search.
func TestTwoUsersIsolated(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true, rbw: ptr(false)})
	type party struct{ user, thread, secret string }
	alice := party{"alice", "t1", "ALICE-PRIVATE-42"}
	bob := party{"bob", "t1", "BOB-PRIVATE-77"}
	for _, p := range []party{alice, bob} {
		for _, root := range []string{"workspace", "uploads", "outputs"} {
			got := f.text(t, p.user, p.thread, "write_file", map[string]any{
				"path": "/mnt/user-data/" + root + "/secret.txt", "content": p.secret + "\n"})
			if got != "OK" {
				t.Fatalf("%s write: %q", p.user, got)
			}
		}
	}
	for _, pair := range [][2]party{{alice, bob}, {bob, alice}} {
		me, them := pair[0], pair[1]
		theirs := f.paths(t, them.user, them.thread)
		check := func(what, out string) {
			t.Helper()
			if strings.Contains(out, them.secret) {
				t.Errorf("%s sees %s's secret via %s: %q", me.user, them.user, what, out)
			}
			if strings.Contains(out, theirs.Base) {
				t.Errorf("%s sees %s's host path via %s: %q", me.user, them.user, what, out)
			}
		}
		for _, root := range []string{"workspace", "uploads", "outputs"} {
			v := "/mnt/user-data/" + root
			// Own virtual paths resolve to own files.
			if got := f.text(t, me.user, me.thread, "read_file", map[string]any{"path": v + "/secret.txt"}); got != me.secret+"\n" {
				t.Errorf("%s reads own %s: %q", me.user, root, got)
			}
			check("ls", f.text(t, me.user, me.thread, "ls", map[string]any{"path": v}))
			check("glob", f.text(t, me.user, me.thread, "glob", map[string]any{"path": v, "pattern": "**"}))
			check("grep", f.text(t, me.user, me.thread, "grep", map[string]any{"path": v, "pattern": "PRIVATE"}))
			// Their host paths are refused by every tool.
			host := filepath.Join(theirs.UserData, root, "secret.txt")
			for _, name := range []string{"read_file", "ls", "glob", "grep", "write_file", "str_replace"} {
				res := f.call(t, me.user, me.thread, name, map[string]any{
					"path": host, "pattern": "*", "content": "x", "old_str": them.secret, "new_str": "x"})
				if !res.IsError {
					t.Errorf("%s %s on %s's host path: %q", me.user, name, them.user, res.TextContent())
				}
				check(name, res.TextContent())
			}
			out := f.text(t, me.user, me.thread, "bash", map[string]any{"command": "cat " + host})
			if !strings.HasPrefix(out, "Error: Unsafe absolute paths in command") {
				t.Errorf("bash cat of %s's file: %q", them.user, out)
			}
			if strings.Contains(out, them.secret) { // the refusal echoes the command the model sent, nothing more
				t.Errorf("bash leaked the secret: %q", out)
			}
		}
		check("bash grep", f.text(t, me.user, me.thread, "bash", map[string]any{"command": "grep -r PRIVATE /mnt/user-data/workspace /mnt/user-data/outputs"}))
	}
	// Nothing was changed.
	for _, p := range []party{alice, bob} {
		tp := f.paths(t, p.user, p.thread)
		for _, root := range []string{tp.Workspace, tp.Uploads, tp.Outputs} {
			if b, _ := os.ReadFile(filepath.Join(root, "secret.txt")); string(b) != p.secret+"\n" {
				t.Errorf("%s's %s changed: %q", p.user, root, b)
			}
		}
	}
	if a, b := f.paths(t, "alice", "t1"), f.paths(t, "bob", "t1"); a.Base == b.Base {
		t.Fatal("same thread folder for two users")
	}
}

func TestProviderLRUAndIDs(t *testing.T) {
	home := t.TempDir()
	p, err := FromConfig(home, nil, nil)
	mustDo(t, err)
	p = NewLocal(p.Layout(), LocalOptions{MaxSandboxes: 3})
	ctx := t.Context()
	first, err := p.Acquire(ctx, "u1", "t1")
	mustDo(t, err)
	if first.ID() != "local:u1:t1" || !isLocalSandboxID(first.ID()) {
		t.Errorf("id = %q", first.ID())
	}
	if again, _ := p.Acquire(ctx, "u1", "t1"); again != first {
		t.Error("second Acquire returned a new sandbox")
	}
	for i := 2; i <= 4; i++ {
		if _, err := p.Acquire(ctx, "u1", fmt.Sprintf("t%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if p.Len() != 3 {
		t.Errorf("cached %d, want 3", p.Len())
	}
	if again, _ := p.Acquire(ctx, "u1", "t1"); again == first {
		t.Error("t1 should have been evicted")
	}
	for _, bad := range [][2]string{{"..", "t"}, {"u", "../x"}, {"u", ""}, {"u/x", "t"}} {
		if _, err := p.Acquire(ctx, bad[0], bad[1]); err == nil {
			t.Errorf("Acquire(%q) accepted", bad)
		}
	}
	for _, d := range []string{"workspace", "uploads", "outputs"} {
		if fi, err := os.Stat(filepath.Join(home, "users", "u1", "threads", "t1", "user-data", d)); err != nil || !fi.IsDir() {
			t.Errorf("%s not created: %v", d, err)
		}
	}
	if td := first.ThreadData(); !strings.HasSuffix(td.OutputsPath, filepath.Join("t1", "user-data", "outputs")) {
		t.Errorf("thread data = %+v", td)
	}
	if isLocalSandboxID("aio:1") || !isLocalSandboxID("local") {
		t.Error("isLocalSandboxID")
	}
	if _, err := FromConfig(home, func() *cfgT {
		c := defaultCfg()
		c.Sandbox.Use = "deerflow.community.aio_sandbox:AioSandboxProvider"
		return c
	}(), nil); err == nil {
		t.Error("a non-local provider was accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.Acquire(cctx, "u1", "t9"); err == nil {
		t.Error("Acquire ignored a cancelled context")
	}
}

func TestProviderConcurrentAcquire(t *testing.T) {
	p, err := FromConfig(t.TempDir(), nil, nil)
	mustDo(t, err)
	var wg sync.WaitGroup
	got := make([]*Sandbox, 32)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sb, err := p.Acquire(t.Context(), "u", "t")
			if err != nil {
				t.Error(err)
			}
			got[i] = sb
		}()
	}
	wg.Wait()
	for _, sb := range got {
		if sb != got[0] {
			t.Fatal("concurrent Acquire returned different sandboxes")
		}
	}
}

func TestConcurrentStrReplaceKeepsEveryEdit(t *testing.T) {
	f := newFixture(t, fixtureOpts{rbw: ptr(false)})
	tp := f.paths(t, "u1", "t1")
	var b strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "k%02d=old\n", i)
	}
	mustDo(t, os.WriteFile(filepath.Join(tp.Workspace, "c.txt"), []byte(b.String()), 0o644))
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("k%02d=", i)
			if got := f.text(t, "u1", "t1", "str_replace", map[string]any{"path": "/mnt/user-data/workspace/c.txt", "old_str": key + "old", "new_str": key + "new"}); got != "OK" {
				t.Errorf("edit %d: %q", i, got)
			}
		}()
	}
	wg.Wait()
	data, _ := os.ReadFile(filepath.Join(tp.Workspace, "c.txt"))
	if strings.Contains(string(data), "old") {
		t.Errorf("lost an edit:\n%s", data)
	}
}

func TestGlobGrepBehaviour(t *testing.T) {
	f := newFixture(t, fixtureOpts{rbw: ptr(false), mutate: func(c *cfgT) {}})
	tp := f.paths(t, "u1", "t1")
	files := map[string]string{
		"src/top.py":              "import os\nprint('Hello')\n",
		"src/pkg/mod.py":          "def hello():\n    return 1\n",
		"src/pkg/readme.md":       "HELLO docs\n",
		"node_modules/x/index.js": "hello\n",
		".git/config":             "hello\n",
		"build/out.py":            "hello\n",
		"app.log":                 "hello\n",
		"bin.dat":                 "hello\x00world\n",
		"long.txt":                strings.Repeat("x", 250) + "hello\n",
		"notes/hello-world.txt":   "nothing here\n",
	}
	for name, content := range files {
		p := filepath.Join(tp.Workspace, filepath.FromSlash(name))
		mustDo(t, os.MkdirAll(filepath.Dir(p), 0o755))
		mustDo(t, os.WriteFile(p, []byte(content), 0o644))
	}
	W := "/mnt/user-data/workspace"
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"glob basename any depth", map[string]any{"pattern": "*.py", "path": W},
			"Found 2 paths under " + W + "\n1. " + W + "/src/pkg/mod.py\n2. " + W + "/src/top.py"},
		{"glob doublestar zero dirs", map[string]any{"pattern": "src/**/*.py", "path": W},
			"Found 2 paths under " + W + "\n1. " + W + "/src/pkg/mod.py\n2. " + W + "/src/top.py"},
		{"glob anchored", map[string]any{"pattern": "src/*.py", "path": W},
			"Found 1 paths under " + W + "\n1. " + W + "/src/top.py"},
		{"glob dirs", map[string]any{"pattern": "src/*", "path": W, "include_dirs": true},
			"Found 2 paths under " + W + "\n1. " + W + "/src/pkg\n2. " + W + "/src/top.py"},
		{"glob none", map[string]any{"pattern": "*.rs", "path": W}, "No files matched under " + W},
		{"glob truncated", map[string]any{"pattern": "**", "path": W + "/src", "max_results": 1},
			"Found 1 paths under " + W + "/src (showing first 1)\n1. " + W + "/src/pkg/mod.py\nResults truncated. Narrow the path or pattern to see fewer matches."},
		{"glob missing dir", map[string]any{"pattern": "*", "path": W + "/nope"}, "Error: Directory not found: " + W + "/nope"},
		{"glob on file", map[string]any{"pattern": "*", "path": W + "/src/top.py"}, "Error: Path is not a directory: " + W + "/src/top.py"},
		{"grep case-insensitive", map[string]any{"pattern": "hello", "path": W + "/src"},
			"Found 3 matches under " + W + "/src\n" + W + "/src/pkg/mod.py:1: def hello():\n" + W + "/src/pkg/readme.md:1: HELLO docs\n" + W + "/src/top.py:2: print('Hello')"},
		{"grep case-sensitive", map[string]any{"pattern": "Hello", "path": W + "/src", "case_sensitive": true},
			"Found 1 matches under " + W + "/src\n" + W + "/src/top.py:2: print('Hello')"},
		{"grep glob filter", map[string]any{"pattern": "hello", "path": W, "glob": "**/*.md"},
			"Found 1 matches under " + W + "\n" + W + "/src/pkg/readme.md:1: HELLO docs"},
		{"grep literal", map[string]any{"pattern": "print('", "path": W + "/src", "literal": true},
			"Found 1 matches under " + W + "/src\n" + W + "/src/top.py:2: print('Hello')"},
		{"grep single file", map[string]any{"pattern": "import", "path": W + "/src/top.py"},
			"Found 1 matches under " + W + "/src/top.py\n" + W + "/src/top.py:1: import os"},
		{"grep bad regex", map[string]any{"pattern": "(", "path": W}, "Error: Invalid regex pattern: error parsing regexp: missing closing ): `(?i)(`"},
		{"grep truncated", map[string]any{"pattern": "hello", "path": W + "/src", "max_results": 2},
			"Found 2 matches under " + W + "/src (showing first 2)\n" + W + "/src/pkg/mod.py:1: def hello():\n" + W + "/src/pkg/readme.md:1: HELLO docs\nResults truncated. Narrow the path or add a glob filter."},
		{"grep none", map[string]any{"pattern": "zzz", "path": W}, "No matches found under " + W},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "glob"
			if strings.HasPrefix(tc.name, "grep") {
				name = "grep"
			}
			if got := f.text(t, "u1", "t1", name, tc.args); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	// Ignored folders, logs and binaries are skipped; long lines are cut.
	got := f.text(t, "u1", "t1", "grep", map[string]any{"pattern": "hello", "path": W})
	for _, bad := range []string{"node_modules", ".git", "build/", "app.log", "bin.dat"} {
		if strings.Contains(got, bad) {
			t.Errorf("grep searched %s:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, W+"/long.txt:1: "+strings.Repeat("x", 197)+"...") {
		t.Errorf("long line not summarised:\n%s", got)
	}
	// An ignored folder can still be searched when asked for directly.
	if got := f.text(t, "u1", "t1", "grep", map[string]any{"pattern": "hello", "path": W + "/build"}); !strings.Contains(got, "Found 1 matches") {
		t.Errorf("explicit ignored root: %q", got)
	}
	// ls: depth 2, sorted, ignore list.
	ls := f.text(t, "u1", "t1", "ls", map[string]any{"path": W})
	want := strings.Join([]string{W + "/bin.dat", W + "/long.txt", W + "/notes/", W + "/notes/hello-world.txt", W + "/src/", W + "/src/pkg/", W + "/src/top.py"}, "\n")
	if ls != want {
		t.Errorf("ls:\n%s\nwant:\n%s", ls, want)
	}
}

func TestEffectiveMaxResults(t *testing.T) {
	for _, tc := range []struct {
		req        *int
		configured int
		want       int
	}{
		{nil, 0, 200}, {ptr(0), 0, 200}, {ptr(-1), 0, 200}, {ptr(50), 0, 50}, {ptr(5000), 0, 200}, {ptr(5000), 5000, 1000},
		{ptr(50), 20, 20}, {nil, 30, 30}, {ptr(10), 30, 10}, {nil, 5000, 200},
	} {
		if got := effectiveMax(tc.req, tc.configured, 200, 1000); got != tc.want {
			t.Errorf("effectiveMax(%v, %d) = %d, want %d", tc.req, tc.configured, got, tc.want)
		}
	}
}

func TestPathMatches(t *testing.T) {
	for _, tc := range []struct {
		pattern, rel string
		want         bool
	}{
		{"*.py", "a.py", true}, {"*.py", "x/y/a.py", true}, {"*.py", "a.pyc", false},
		{"src/**/*.py", "src/a.py", true}, {"src/**/*.py", "src/x/y/a.py", true}, {"src/**/*.py", "lib/a.py", false},
		{"**", "a", true}, {"**", "a/b/c", true}, {"**/x", "x", true}, {"**/x", "a/b/x", true},
		{"a/*/c", "a/b/c", true}, {"a/*/c", "a/b/d/c", false}, {"a/**/**/c", "a/c", true},
		{"src/*.py", "src/x/a.py", false}, {`src\*.py`, "src/a.py", true}, {"[", "[", false},
	} {
		if got := pathMatches(tc.pattern, tc.rel); got != tc.want {
			t.Errorf("pathMatches(%q, %q) = %v, want %v", tc.pattern, tc.rel, got, tc.want)
		}
	}
}
