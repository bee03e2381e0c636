package deferred_test

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/internal/searcheval"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// runCopies returns what package toolset hands each run: a shallow copy
// of every tool with its own Meta carrying the source label.
func runCopies(tools []*tool.Tool) []*tool.Tool {
	out := make([]*tool.Tool, len(tools))
	for i, t := range tools {
		if t == nil {
			continue
		}
		c := *t
		c.Meta = maps.Clone(t.Meta)
		if c.Meta == nil {
			c.Meta = map[string]string{}
		}
		c.Meta[tool.MetaSource] = "mcp"
		out[i] = &c
	}
	return out
}

// countingCache returns a cache of size entries and its build counter.
func countingCache(size int) (*deferred.CatalogCache, *atomic.Int32) {
	var builds atomic.Int32
	return deferred.NewCatalogCache(deferred.CatalogCacheOptions{Size: size, OnBuild: func(int) { builds.Add(1) }}), &builds
}

func TestCatalogCache_buildsOnceForManyRuns(t *testing.T) {
	base := searcheval.DistinctTools(300, 0)
	cc, builds := countingCache(0)
	first := cc.Catalog(runCopies(base))
	for run := range 20 {
		tools := runCopies(base)
		c := cc.Catalog(tools)
		if c.Hash() != first.Hash() || c.Len() != len(base) {
			t.Fatalf("run %d: hash %s, %d tools; want %s, %d", run, c.Hash(), c.Len(), first.Hash(), len(base))
		}
		// The run's catalogue returns the run's own tools.
		got := c.Search("select:"+tools[7].Name, 0)
		if len(got) != 1 || got[0] != tools[7] {
			t.Fatalf("run %d: select returned %v, want the run's own %s", run, got, tools[7].Name)
		}
		ranked := c.Search(tools[42].Description, 3)
		if len(ranked) == 0 || ranked[0] != tools[42] {
			t.Fatalf("run %d: ranked search did not return the run's own %s first: %v", run, tools[42].Name, ranked)
		}
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("21 runs of one catalogue built the index %d times, want 1", n)
	}
}

func TestCatalogCache_sameAsUncached(t *testing.T) {
	base := searcheval.DistinctTools(200, 0)
	// A nil tool, a tool without a name and a duplicate are left out, as
	// NewCatalog leaves them out.
	base = append(base, nil, &tool.Tool{Description: "no name"}, base[3])
	cc, _ := countingCache(0)
	cc.Catalog(runCopies(base))
	tools := runCopies(base)
	cached, fresh := cc.Catalog(tools), deferred.NewCatalog(tools)
	if cached.Hash() != fresh.Hash() || cached.PromptSection() != fresh.PromptSection() {
		t.Errorf("cached catalogue differs from a fresh one: hash %s vs %s", cached.Hash(), fresh.Hash())
	}
	if diff := cmp.Diff(fresh.Tools(), cached.Tools()); diff != "" {
		t.Errorf("tools (-fresh +cached):\n%s", diff)
	}
	for _, q := range []string{tools[10].Description, "+" + tools[20].Name[:12] + " " + tools[20].Description, "select:" + tools[5].Name} {
		if diff := cmp.Diff(fresh.Search(q, 5), cached.Search(q, 5)); diff != "" {
			t.Errorf("Search(%.30q) (-fresh +cached):\n%s", q, diff)
		}
	}
}

func TestCatalogCache_concurrentRunsBuildOnce(t *testing.T) {
	base := searcheval.DistinctTools(2000, 0)
	cc, builds := countingCache(0)
	var wg sync.WaitGroup
	hashes := make([]string, 8)
	for i := range hashes {
		wg.Go(func() { hashes[i] = cc.Catalog(runCopies(base)).Hash() })
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("8 concurrent runs of one catalogue built the index %d times, want 1", n)
	}
	if hashes[0] == "" || slices.ContainsFunc(hashes, func(h string) bool { return h != hashes[0] }) {
		t.Errorf("hashes differ: %v", hashes)
	}
}

func TestCatalogCache_differentContentBuildsAgain(t *testing.T) {
	base := searcheval.DistinctTools(50, 0)
	edit := func(f func(*tool.Tool)) []*tool.Tool {
		tools := runCopies(base)
		f(tools[17])
		return tools
	}
	sameLength := func(s string) string { return s[:len(s)-1] + "X" }
	cases := []struct {
		name  string
		tools []*tool.Tool
	}{
		{"description of the same length", edit(func(t *tool.Tool) { t.Description = sameLength(t.Description) })},
		{"schema of the same length", edit(func(t *tool.Tool) {
			t.InputSchema = json.RawMessage(sameLength(string(t.InputSchema[:len(t.InputSchema)-1])) + "}")
		})},
		{"server", edit(func(t *tool.Tool) { t.Meta["mcp_server"] = "elsewhere" })},
		{"name of the same length", edit(func(t *tool.Tool) { t.Name = sameLength(t.Name) })},
		{"one tool fewer", runCopies(base[1:])},
		{"another order", func() []*tool.Tool { s := runCopies(base); s[0], s[1] = s[1], s[0]; return s }()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc, builds := countingCache(0)
			cc.Catalog(runCopies(base))
			got := cc.Catalog(tc.tools)
			if n := builds.Load(); n != 2 {
				t.Errorf("builds = %d, want 2 (a new index for the changed list)", n)
			}
			if fresh := deferred.NewCatalog(tc.tools); got.Hash() != fresh.Hash() {
				t.Errorf("hash %s, want that of a fresh build %s", got.Hash(), fresh.Hash())
			}
			cc.Catalog(runCopies(base))
			if n := builds.Load(); n != 2 {
				t.Errorf("the first list again: builds = %d, want still 2", n)
			}
		})
	}
}

func TestCatalogCache_boundedLeastRecentlyUsed(t *testing.T) {
	lists := make([][]*tool.Tool, 4)
	for i := range lists {
		lists[i] = searcheval.DistinctTools(10+i, 0)
	}
	cc, builds := countingCache(2)
	cc.Catalog(lists[0])
	cc.Catalog(lists[1])
	cc.Catalog(lists[0]) // 0 is now the most recently used
	cc.Catalog(lists[2]) // evicts 1
	if n, l := builds.Load(), cc.Len(); n != 3 || l != 2 {
		t.Fatalf("after three lists in a cache of two: builds %d, len %d; want 3, 2", n, l)
	}
	cc.Catalog(lists[0])
	cc.Catalog(lists[2])
	if n := builds.Load(); n != 3 {
		t.Errorf("lists 0 and 2 are kept, yet builds = %d, want 3", n)
	}
	cc.Catalog(lists[1])
	if n := builds.Load(); n != 4 {
		t.Errorf("list 1 was evicted, yet builds = %d, want 4", n)
	}
	cc.Catalog(lists[3])
	if l := cc.Len(); l != 2 {
		t.Errorf("len %d, want the size, 2", l)
	}
}

func TestCatalogCache_nilBuildsEveryTime(t *testing.T) {
	var cc *deferred.CatalogCache
	tools := searcheval.DistinctTools(5, 0)
	if c := cc.Catalog(tools); c.Len() != 5 || cc.Len() != 0 {
		t.Errorf("nil cache: %d tools, len %d", c.Len(), cc.Len())
	}
}

// TestCatalogCache_promotionsStayPerRun checks that two runs sharing one
// index keep their own promotions: each run's tool_search promotes into
// its own thread state, and one thread's promotion does not expose a
// tool to another.
func TestCatalogCache_promotionsStayPerRun(t *testing.T) {
	base := searcheval.DistinctTools(40, 0)
	cc, builds := countingCache(0)
	cfg := config.ToolSearch{Enabled: true}
	a, err := cc.SetupRouted(runCopies(base), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cc.SetupRouted(runCopies(base), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := builds.Load(); n != 1 {
		t.Fatalf("builds = %d, want 1", n)
	}
	res, err := a.ToolSearch.Handler(t.Context(), &tool.Call{Name: deferred.ToolSearchName}, json.RawMessage(`{"query":"select:`+base[3].Name+`"}`))
	if err != nil || res.Update == nil || res.Update.Promoted == nil {
		t.Fatalf("tool_search: %v, %+v", err, res)
	}
	stA := &thread.State{Promoted: res.Update.Promoted}
	stB := &thread.State{}
	if a.Catalog.IsHidden(stA, base[3].Name) {
		t.Errorf("run a: %s still hidden after its promotion", base[3].Name)
	}
	if !b.Catalog.IsHidden(stB, base[3].Name) {
		t.Errorf("run b: %s exposed without a promotion of its own", base[3].Name)
	}
}
