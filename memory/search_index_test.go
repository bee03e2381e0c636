package memory_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/memory"
)

// contents returns the contents of facts, in order.
func contents(facts []memory.Fact) []string {
	out := []string{}
	for _, f := range facts {
		out = append(out, f.Content)
	}
	return out
}

// TestSearchIndex_keptUntilTheFactsChange: a search or prompt of a user
// whose facts did not change reuses the index; any change of the facts,
// also one written by another process at the same lastUpdated, builds it
// anew and the next search sees it.
func TestSearchIndex_keptUntilTheFactsChange(t *testing.T) {
	mgr, home := newManager(t, section(t, ""), nil)
	ctx := t.Context()
	_, id, err := mgr.CreateFact(ctx, "u", memory.FactInput{Content: "Prefers Python for data scripts", Confidence: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got, _ := mgr.Search(ctx, "u", "python", "", 5); len(got) != 1 {
			t.Fatalf("search = %+v", got)
		}
	}
	if _, err := mgr.Prompt(ctx, "u", "python please"); err != nil {
		t.Fatal(err)
	}
	if users, builds := memory.SearchCacheStats(mgr); builds != 1 || !cmp.Equal(users, []string{"u"}) {
		t.Errorf("after 3 searches and a prompt: users %v, %d builds; want [u], 1", users, builds)
	}

	// A change through the manager.
	content := "Prefers Rust for data scripts"
	if _, err := mgr.UpdateFact(ctx, "u", id, memory.FactPatch{Content: &content}); err != nil {
		t.Fatal(err)
	}
	if got, _ := mgr.Search(ctx, "u", "rust", "", 5); !cmp.Equal(contents(got), []string{content}) {
		t.Errorf("search after the update = %v", contents(got))
	}
	// A change of the file by someone else, lastUpdated untouched (the
	// test clock does not move).
	p := filepath.Join(home, "users", "u", "memory.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), "Rust", "Haskell", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := mgr.Search(ctx, "u", "haskell", "", 5); !cmp.Equal(contents(got), []string{"Prefers Haskell for data scripts"}) {
		t.Errorf("search after the file changed = %v", contents(got))
	}
	if got, _ := mgr.Search(ctx, "u", "rust", "", 5); len(got) != 0 {
		t.Errorf("a stale index answered: %v", contents(got))
	}
	if _, builds := memory.SearchCacheStats(mgr); builds != 3 {
		t.Errorf("%d builds, want 3 (first, after the update, after the file changed)", builds)
	}
}

// TestSearchIndex_boundedLRU: at most SearchCacheUsers indexes are kept,
// the least recently searched user's dropped first.
func TestSearchIndex_boundedLRU(t *testing.T) {
	mgr, err := memory.New(memory.Options{Config: section(t, ""), Home: t.TempDir(), SearchCacheUsers: 2,
		Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close(t.Context())
	ctx := t.Context()
	for _, u := range []string{"a", "b", "c"} {
		if _, _, err := mgr.CreateFact(ctx, u, memory.FactInput{Content: "Fact of " + u, Confidence: 0.9}); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []string{"a", "b", "a", "c"} {
		if got, _ := mgr.Search(ctx, u, "fact", "", 5); !cmp.Equal(contents(got), []string{"Fact of " + u}) {
			t.Errorf("search of %s = %v", u, contents(got))
		}
	}
	users, builds := memory.SearchCacheStats(mgr)
	if diff := cmp.Diff([]string{"c", "a"}, users); diff != "" || builds != 3 {
		t.Errorf("kept (-want +got):\n%s%d builds, want 3", diff, builds)
	}
	// b was dropped: searching it builds its index again.
	mgr.Search(ctx, "b", "fact", "", 5)
	if users, builds := memory.SearchCacheStats(mgr); !cmp.Equal(users, []string{"b", "c"}) || builds != 4 {
		t.Errorf("after b again: %v, %d builds", users, builds)
	}
}

// TestSearchIndex_bm25AndCategory: the cached index ranks by bm25 (a
// fact with more of the query's words first) and a category keeps that
// category's facts only, the others' words not counted.
func TestSearchIndex_bm25AndCategory(t *testing.T) {
	mgr, _ := newManager(t, section(t, ""), nil)
	ctx := t.Context()
	for _, f := range []struct{ c, cat string }{
		{"Uses Go at work", "context"},
		{"Prefers Go and Neovim and tmux for Go work", "preference"},
		{"Prefers tmux", "preference"},
	} {
		if _, _, err := mgr.CreateFact(ctx, "u", memory.FactInput{Content: f.c, Category: f.cat, Confidence: 0.5}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := mgr.Search(ctx, "u", "go neovim tmux", "", 5)
	if diff := cmp.Diff([]string{"Prefers Go and Neovim and tmux for Go work", "Prefers tmux", "Uses Go at work"}, contents(got)); diff != "" {
		t.Errorf("ranking (-want +got):\n%s", diff)
	}
	got, _ = mgr.Search(ctx, "u", "go work", "context", 5)
	if diff := cmp.Diff([]string{"Uses Go at work"}, contents(got)); diff != "" {
		t.Errorf("category context (-want +got):\n%s", diff)
	}
	got, _ = mgr.Search(ctx, "u", "tmux", "preference", 1)
	if len(got) != 1 {
		t.Errorf("limit 1 = %v", contents(got))
	}
	if _, builds := memory.SearchCacheStats(mgr); builds != 1 {
		t.Errorf("%d builds for one document, want 1", builds)
	}
}

// TestSearchIndex_afterClose: a search after Close still answers, by
// substring.
func TestSearchIndex_afterClose(t *testing.T) {
	mgr, _ := newManager(t, section(t, ""), nil)
	if _, _, err := mgr.CreateFact(t.Context(), "u", memory.FactInput{Content: "Prefers tea", Confidence: 0.9}); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, err := mgr.Search(t.Context(), "u", "tea", "", 5); err != nil || len(got) != 1 {
		t.Errorf("search after close = %v, %v", contents(got), err)
	}
}
