package deferred

import (
	"bytes"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// DefaultCatalogCacheSize is how many distinct catalogues a
// [CatalogCache] keeps when its options leave Size unset. A process sees
// one catalogue per distinct MCP tool list a run may use (one per
// authorization role or subagent tool allowlist that removes MCP tools),
// and one more for a while after the extensions file changes. An index of
// 10,000 tools keeps about 20 MB live (docs/benchmarks.md; 157 MB for a
// synthetic catalogue in which no two tools share a word), so eight such
// catalogues stay near 150 MB.
const DefaultCatalogCacheSize = 8

// serverKey is the Meta key of a tool's MCP server, which the search
// index reads (mcptools.MetaServer).
const serverKey = "mcp_server"

// CatalogCacheOptions configure a [CatalogCache]. The zero value is
// usable.
type CatalogCacheOptions struct {
	// Size is how many distinct catalogues are kept; when one more is
	// built the least recently used is dropped. ≤ 0 means
	// [DefaultCatalogCacheSize]. A lookup compares the list with each
	// kept list of the same length, so Size is meant to stay small
	// (tens).
	Size int
	// OnBuild, if set, is called after each index the cache builds, with
	// the number of tools in the list (for tests and metrics). It may be
	// called from several goroutines at once.
	OnBuild func(tools int)
	// Hybrid, if set, embeds each catalogue the cache builds, in the
	// background, and tool_search then fuses dense and lexical ranks
	// (nil: lexical only). Its owner closes it.
	Hybrid *Hybrid
}

// CatalogCache builds the catalogue index of each distinct tool list once
// and shares it between every run, subagent task and thread that uses the
// cache: a run whose MCP tools have the same content as an earlier run's
// gets a [Catalog] over its own tools that reuses the earlier index
// (search index, promotion hash, prompt section), at the cost of
// comparing the two lists. Promotions stay in each thread's state; the
// cache keeps no per-run state.
//
// Two lists have the same content when they hold, position by position,
// tools with the same name, description, input schema bytes and
// Meta["mcp_server"] — all the index reads. The lists' tools need not be
// the same values: package toolset hands each run labelled copies. Runs
// that ask for the same uncached list at once wait for one build.
//
// Create one with [NewCatalogCache] for the life of the process (or of
// whatever owns the tool sources); it holds no goroutines or files and
// needs no closing. A nil *CatalogCache builds every catalogue afresh.
// It is safe for concurrent use.
type CatalogCache struct {
	size    int             // immutable after NewCatalogCache
	onBuild func(tools int) // immutable after NewCatalogCache
	hybrid  *Hybrid         // immutable after NewCatalogCache
	flight  singleflight.Group

	mu      sync.Mutex
	entries []*catalogIndex // guarded by mu; most recently used first, at most size
}

// NewCatalogCache returns an empty cache.
func NewCatalogCache(o CatalogCacheOptions) *CatalogCache {
	if o.Size <= 0 {
		o.Size = DefaultCatalogCacheSize
	}
	return &CatalogCache{size: o.Size, onBuild: o.OnBuild, hybrid: o.Hybrid}
}

// Len returns how many catalogues the cache holds.
func (cc *CatalogCache) Len() int {
	if cc == nil {
		return 0
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.entries)
}

// Catalog returns the catalogue of tools, as [NewCatalog] builds it,
// reusing the index of an earlier list with the same content. The result
// searches and returns the given tools.
func (cc *CatalogCache) Catalog(tools []*tool.Tool) *Catalog {
	if cc == nil {
		return NewCatalog(tools)
	}
	if x, fresh := cc.lookup(tools); x != nil {
		c := x.catalog(tools)
		if fresh {
			x.remember(c)
		}
		return c
	}
	v, _, _ := cc.flight.Do(flightKey(tools), func() (any, error) {
		// A build that finished between the lookup and Do has added
		// its index already.
		if x, _ := cc.lookup(tools); x != nil {
			return x, nil
		}
		return cc.build(tools), nil
	})
	x := v.(*catalogIndex)
	if !x.matches(tools) {
		// Another list with the same flight key was being built: build
		// this one too.
		x = cc.build(tools)
	}
	return x.catalog(tools)
}

// flightKey is the key under which concurrent builds of tools wait for
// one another: the list's length and its first and last names. Lists
// that differ elsewhere share a key at worst, and the waiter builds its
// own after the first build.
func flightKey(tools []*tool.Tool) string {
	first, last := "", ""
	if len(tools) > 0 && tools[0] != nil {
		first = tools[0].Name
	}
	if len(tools) > 0 && tools[len(tools)-1] != nil {
		last = tools[len(tools)-1].Name
	}
	return strconv.Itoa(len(tools)) + "\x00" + first + "\x00" + last
}

// SetupRouted is the package's [SetupRouted] with the catalogue taken
// from cc.
func (cc *CatalogCache) SetupRouted(mcp []*tool.Tool, cfg config.ToolSearch, servers map[string]config.MCPServer) (*Deferred, error) {
	if !cfg.Enabled || len(mcp) == 0 {
		return nil, nil
	}
	c := cc.Catalog(mcp)
	return setup(c, cfg, newRouter(mcp, servers, cfg.AutoPromoteTopK, c))
}

// build builds the index of tools and keeps it, dropping the least
// recently used index beyond the cache's size.
func (cc *CatalogCache) build(tools []*tool.Tool) *catalogIndex {
	x := buildCatalogIndex(tools)
	if cc.hybrid != nil {
		x.hybrid, x.dense.done = cc.hybrid, make(chan struct{})
		cc.hybrid.ensure(x)
	}
	cc.mu.Lock()
	cc.entries = slices.Insert(cc.entries, 0, x)
	if len(cc.entries) > cc.size {
		clear(cc.entries[cc.size:])
		cc.entries = cc.entries[:cc.size]
	}
	cc.mu.Unlock()
	if cc.onBuild != nil {
		cc.onBuild(len(tools))
	}
	return x
}

// lookup returns the kept index whose list has the content of tools, and
// marks it most recently used; nil when there is none. fresh is true when
// tools holds other tool values than the index's recent lists. The lists
// are compared outside the lock.
func (cc *CatalogCache) lookup(tools []*tool.Tool) (x *catalogIndex, fresh bool) {
	cc.mu.Lock()
	var cands []*catalogIndex
	for _, x := range cc.entries {
		if len(x.src) == len(tools) {
			cands = append(cands, x)
		}
	}
	cc.mu.Unlock()
	for _, x := range cands {
		recent := x.matchesRecent(tools)
		if !recent && !x.matches(tools) {
			continue
		}
		cc.mu.Lock()
		if i := slices.Index(cc.entries, x); i > 0 {
			copy(cc.entries[1:i+1], cc.entries[:i])
			cc.entries[0] = x
		}
		cc.mu.Unlock()
		return x, !recent
	}
	return nil, false
}

// matchesRecent reports whether tools holds, position by position, the
// same tool values as a catalogue that matched x lately: the lists that
// toolset's assembly cache hands out again while nothing changed, which
// compare without reading a field.
func (x *catalogIndex) matchesRecent(tools []*tool.Tool) bool {
	for i := range x.recent {
		if r := x.recent[i].Load(); r != nil && slices.Equal(r.src, tools) {
			return true
		}
	}
	return false
}

// remember records c, a catalogue of x over other tool values than its
// recent ones, as its most recent.
func (x *catalogIndex) remember(c *Catalog) {
	if x.kept != nil {
		return // c holds only the kept tools: not the list to compare
	}
	x.recent[1].Store(x.recent[0].Load())
	x.recent[0].Store(&recentList{src: c.tools})
}

// recentList is a list of tools that matched an index (a catalogue's
// own copy, never changed).
type recentList struct{ src []*tool.Tool }

// toolContent is what the index reads of a tool.
type toolContent struct {
	present            bool // the tool was not nil
	name, desc, server string
	schema             []byte
}

// matches reports whether tools has the content of x.src: position by
// position, both nil or the same name, description, schema bytes and
// server (Meta["mcp_server"]). Tools copied from the same values share
// their strings and schema bytes, which compare without reading them.
func (x *catalogIndex) matches(tools []*tool.Tool) bool {
	if len(tools) != len(x.src) {
		return false
	}
	for i, t := range tools {
		s := &x.src[i]
		if t == nil {
			if s.present {
				return false
			}
			continue
		}
		if !s.present || t.Name != s.name || t.Description != s.desc ||
			!bytes.Equal(t.InputSchema, s.schema) || t.Meta[serverKey] != s.server {
			return false
		}
	}
	return true
}
