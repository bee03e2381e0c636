package customagent_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/vpath"
)

func newStore(t *testing.T) (*customagent.Store, string) {
	t.Helper()
	home := t.TempDir()
	layout, err := vpath.New(vpath.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	return customagent.New(layout, customagent.Options{}), home
}

func ptr[T any](v T) *T { return &v }

func mustUpdate(t *testing.T, s *customagent.Store, user, name, desc, soul string) {
	t.Helper()
	if err := s.Update(user, name, customagent.Change{Config: &customagent.Config{Name: name, Description: desc}, Soul: &soul}); err != nil {
		t.Fatal(err)
	}
}

func mustLoad(t *testing.T, s *customagent.Store, user, name string) *customagent.Agent {
	t.Helper()
	a, err := s.Load(user, name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestUpdateCreatesAndLoads(t *testing.T) {
	s, home := newStore(t)
	mustUpdate(t, s, "alice", "Reviewer", "reviews code", "# Soul")
	dir := filepath.Join(home, "users", "alice", "agents", "reviewer")
	for _, f := range []string{"config.yaml", "SOUL.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	a := mustLoad(t, s, "alice", "reviewer")
	if a.Config.Name != "Reviewer" || a.Config.Description != "reviews code" || a.Soul != "# Soul" || a.Legacy {
		t.Errorf("loaded %+v soul %q", a.Config, a.Soul)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("agent folder holds %d entries, want config.yaml and SOUL.md only", len(entries))
	}
}

func TestUpdateSoulOnlyKeepsConfig(t *testing.T) {
	s, _ := newStore(t)
	mustUpdate(t, s, "u", "a", "desc", "old")
	if err := s.Update("u", "a", customagent.Change{Soul: ptr("new")}); err != nil {
		t.Fatal(err)
	}
	a := mustLoad(t, s, "u", "a")
	if a.Soul != "new" || a.Config.Description != "desc" {
		t.Errorf("got %q / %q", a.Soul, a.Config.Description)
	}
}

func TestLoadMissingAndInvalid(t *testing.T) {
	s, home := newStore(t)
	if _, err := s.Load("u", "ghost"); !errors.Is(err, customagent.ErrNotFound) {
		t.Errorf("missing agent: %v", err)
	}
	var ne *customagent.NameError
	if _, err := s.Load("u", "../x"); !errors.As(err, &ne) {
		t.Errorf("bad name: %v", err)
	}
	if _, err := s.Load("bad user!", "a"); !errors.Is(err, vpath.ErrInvalidID) {
		t.Errorf("bad user: %v", err)
	}
	// A memory-only folder is not an agent.
	dir := filepath.Join(home, "users", "u", "agents", "mem")
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "memory.json"), []byte("{}"), 0o644)
	if _, err := s.Load("u", "mem"); !errors.Is(err, customagent.ErrNotFound) {
		t.Errorf("memory-only folder: %v", err)
	}
	_ = os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("skills: web\n"), 0o644)
	var ce *customagent.ConfigError
	if _, err := s.Load("u", "mem"); !errors.As(err, &ce) {
		t.Errorf("unreadable config: %v", err)
	}
}

func TestLegacyLayout(t *testing.T) {
	s, home := newStore(t)
	legacy := filepath.Join(home, "agents", "old")
	_ = os.MkdirAll(legacy, 0o755)
	_ = os.WriteFile(filepath.Join(legacy, "config.yaml"), []byte("name: old\ndescription: legacy\n"), 0o644)
	_ = os.WriteFile(filepath.Join(legacy, "SOUL.md"), []byte("legacy soul"), 0o644)
	a := mustLoad(t, s, "u", "old")
	if !a.Legacy || a.Soul != "legacy soul" {
		t.Errorf("legacy agent: %+v", a)
	}
	if !s.LegacyOnly("u", "old") {
		t.Error("LegacyOnly = false for a legacy-only agent")
	}
	if ok, _ := s.Exists("u", "old"); ok {
		t.Error("Exists = true for a legacy-only agent")
	}
	mustUpdate(t, s, "u", "old", "mine", "my soul")
	if s.LegacyOnly("u", "old") {
		t.Error("LegacyOnly = true once the user has their own copy")
	}
	if a := mustLoad(t, s, "u", "old"); a.Legacy || a.Soul != "my soul" {
		t.Errorf("own copy must shadow the legacy one: %+v", a)
	}
	list, err := s.List("u")
	if err != nil || len(list) != 1 || list[0].Legacy {
		t.Errorf("List = %v, %v", list, err)
	}
}

// Failures before the commit point leave the old agent; a new agent's
// folder is removed.
func TestUpdateFailureBeforeCommitLeavesOldFiles(t *testing.T) {
	for _, step := range []string{"stage:config.yaml", "stage:SOUL.md", "commit"} {
		t.Run(step, func(t *testing.T) {
			s, home := newStore(t)
			mustUpdate(t, s, "u", "a", "old desc", "old soul")
			customagent.SetTestHook(s, func(got string) error {
				if got == step {
					return errors.New("disk full")
				}
				return nil
			})
			err := s.Update("u", "a", customagent.Change{Config: &customagent.Config{Name: "a", Description: "new"}, Soul: ptr("new soul")})
			if err == nil {
				t.Fatal("update succeeded")
			}
			customagent.SetTestHook(s, nil)
			a := mustLoad(t, s, "u", "a")
			if a.Config.Description != "old desc" || a.Soul != "old soul" {
				t.Errorf("after failure: %q / %q", a.Config.Description, a.Soul)
			}
			entries, _ := os.ReadDir(filepath.Join(home, "users", "u", "agents", "a"))
			if len(entries) != 2 {
				t.Errorf("leftovers in the agent folder: %v", entries)
			}
			// A new agent whose creation fails leaves no folder.
			customagent.SetTestHook(s, func(got string) error {
				if got == step {
					return errors.New("disk full")
				}
				return nil
			})
			_ = s.Update("u", "fresh", customagent.Change{Config: &customagent.Config{Name: "fresh"}, Soul: ptr("s")})
			if _, err := os.Stat(filepath.Join(home, "users", "u", "agents", "fresh")); !os.IsNotExist(err) {
				t.Errorf("failed creation left a folder: %v", err)
			}
		})
	}
}

// A failure after the commit point is finished by the next access.
func TestUpdateFailureAfterCommitIsFinishedOnLoad(t *testing.T) {
	for _, step := range []string{"apply:config.yaml", "apply:SOUL.md"} {
		t.Run(step, func(t *testing.T) {
			s, home := newStore(t)
			mustUpdate(t, s, "u", "a", "old desc", "old soul")
			customagent.SetTestHook(s, func(got string) error {
				if got == step {
					return errors.New("interrupted")
				}
				return nil
			})
			if err := s.Update("u", "a", customagent.Change{Config: &customagent.Config{Name: "a", Description: "new desc"}, Soul: ptr("new soul")}); err != nil {
				t.Fatalf("a committed update must report success: %v", err)
			}
			customagent.SetTestHook(s, nil)
			dir := filepath.Join(home, "users", "u", "agents", "a")
			if _, err := os.Stat(filepath.Join(dir, ".commit")); err != nil {
				t.Fatalf("the interrupted update left no commit folder: %v", err)
			}
			a := mustLoad(t, s, "u", "a")
			if a.Config.Description != "new desc" || a.Soul != "new soul" {
				t.Errorf("after recovery: %q / %q", a.Config.Description, a.Soul)
			}
			if _, err := os.Stat(filepath.Join(dir, ".commit")); !os.IsNotExist(err) {
				t.Errorf("recovery left the commit folder: %v", err)
			}
		})
	}
}

func TestRecoveryDiscardsStaging(t *testing.T) {
	s, home := newStore(t)
	mustUpdate(t, s, "u", "a", "old", "old soul")
	staging := filepath.Join(home, "users", "u", "agents", "a", ".staging")
	_ = os.Mkdir(staging, 0o755)
	_ = os.WriteFile(filepath.Join(staging, "SOUL.md"), []byte("half"), 0o644)
	if a := mustLoad(t, s, "u", "a"); a.Soul != "old soul" {
		t.Errorf("soul = %q", a.Soul)
	}
	if _, err := os.Stat(staging); !os.IsNotExist(err) {
		t.Errorf("staging folder survived: %v", err)
	}
}

// Updates of one agent never overlap, also between two Stores (two
// processes' worth of in-process locks) on one home: the flock serialises
// them.
func TestConcurrentUpdatesSerialise(t *testing.T) {
	home := t.TempDir()
	layout, _ := vpath.New(vpath.Options{Home: home})
	stores := []*customagent.Store{customagent.New(layout, customagent.Options{}), customagent.New(layout, customagent.Options{})}
	var inside, maxInside atomic.Int32
	hook := func(step string) error {
		switch step {
		case "stage:config.yaml":
			n := inside.Add(1)
			for {
				m := maxInside.Load()
				if n <= m || maxInside.CompareAndSwap(m, n) {
					break
				}
			}
		case "apply:SOUL.md":
			inside.Add(-1)
		}
		return nil
	}
	for _, s := range stores {
		customagent.SetTestHook(s, hook)
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			s := stores[i%2]
			v := fmt.Sprint(i)
			if err := s.Update("u", "a", customagent.Change{Config: &customagent.Config{Name: "a", Description: v}, Soul: &v}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if m := maxInside.Load(); m != 1 {
		t.Errorf("%d updates ran at once, want 1", m)
	}
	a := mustLoad(t, stores[0], "u", "a")
	if a.Config.Description != a.Soul {
		t.Errorf("mixed agent: description %q, soul %q", a.Config.Description, a.Soul)
	}
}

// Two users' agents of the same name live in different folders and do
// not share a lock.
func TestUsersAreIsolated(t *testing.T) {
	s, home := newStore(t)
	mustUpdate(t, s, "alice", "shared", "alice desc", "alice soul")
	mustUpdate(t, s, "bob", "shared", "bob desc", "bob soul")
	bobDir := filepath.Join(home, "users", "bob", "agents", "shared")
	before := snapshot(t, bobDir)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			v := fmt.Sprint("alice ", i)
			if err := s.Update("alice", "shared", customagent.Change{Config: &customagent.Config{Name: "shared", Description: v}, Soul: &v}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if diff := snapshot(t, bobDir); diff != before {
		t.Errorf("bob's folder changed:\nbefore %s\nafter  %s", before, diff)
	}
	if a := mustLoad(t, s, "bob", "shared"); a.Soul != "bob soul" {
		t.Errorf("bob's soul = %q", a.Soul)
	}
}

// snapshot describes every file of dir with its content and mtime.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	out := ""
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, _ := d.Info()
		data, _ := os.ReadFile(p)
		out += fmt.Sprintf("%s=%q@%d;", filepath.Base(p), data, fi.ModTime().UnixNano())
		return nil
	})
	return out
}

func TestDefaultSoul(t *testing.T) {
	s, home := newStore(t)
	if err := s.WriteDefaultSoul("global"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(home, "SOUL.md")); string(data) != "global" {
		t.Errorf("default soul = %q", data)
	}
}
