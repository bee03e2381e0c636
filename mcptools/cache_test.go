package mcptools_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// The extensions-file cache, manager side (the signature itself is tested in
// config): a content change with the same mtime, with a backward mtime or
// with the same size makes the tools stale; an unchanged file serves the
// same slice; a deleted file keeps the last known good tools without error.
func TestCacheFollowsExtensionsFileSignature(t *testing.T) {
	path := filepath.Join(t.TempDir(), "extensions_config.json")
	stamp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	write := func(disabled string, mtime time.Time) {
		t.Helper()
		data := `{"mcpServers": {"mem": ` + memServerJSON(`"disabled_tools": ["`+disabled+`"]`) + `}}`
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	write("echo", stamp)
	srv := newTestServer()
	lists := countLists(srv)
	m := newManager(t, mcptools.Options{Extensions: config.NewExtensionsCache(path), Dial: memServers{"mem": srv}.dial})
	get := func() []*tool.Tool {
		t.Helper()
		tools, err := m.Tools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return tools
	}

	first := get()
	if diff := cmp.Diff([]string{"mem_sleep"}, names(first)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if again := get(); &again[0] != &first[0] {
		t.Error("unchanged file: new slice")
	}

	steps := []struct {
		name     string
		disabled string
		mtime    time.Time
		want     []string
	}{
		{"same mtime, same size", "sleep", stamp, []string{"mem_echo"}},
		{"backward mtime", "xxxxx", stamp.Add(-time.Hour), []string{"mem_echo", "mem_sleep"}},
		{"same size swap", "echo", stamp.Add(-time.Hour), []string{"mem_sleep"}},
	}
	prev := first
	for _, st := range steps {
		write(st.disabled, st.mtime)
		got := get()
		if diff := cmp.Diff(st.want, names(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
		if len(got) > 0 && len(prev) > 0 && &got[0] == &prev[0] {
			t.Errorf("%s: stale slice served", st.name)
		}
		prev = got
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := get(); &got[0] != &prev[0] {
		t.Error("deleted file: last known good tools were not kept")
	}
	// Every config change above restarted the server (new fingerprint).
	if n := lists.Load(); n != 4 {
		t.Errorf("tools/list sent %d times, want 4", n)
	}
}

func TestUnchangedServerSurvivesOtherServersChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "extensions_config.json")
	write := func(bArgs string) {
		data := `{"mcpServers": {"a": ` + memServerJSON("") + `, "b": ` + memServerJSON(`"description": "`+bArgs+`"`) + `}}`
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	a, b := newTestServer(), newTestServer()
	listsA, listsB := countLists(a), countLists(b)
	m := newManager(t, mcptools.Options{Extensions: config.NewExtensionsCache(path), Dial: memServers{"a": a, "b": b}.dial})
	if _, err := m.Tools(t.Context()); err != nil {
		t.Fatal(err)
	}
	write("two, changed")
	if _, err := m.Tools(t.Context()); err != nil {
		t.Fatal(err)
	}
	if listsA.Load() != 1 || listsB.Load() != 2 {
		t.Errorf("lists a=%d b=%d; only b should be restarted", listsA.Load(), listsB.Load())
	}
}
