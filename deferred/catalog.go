package deferred

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/antlerhq/antler/deferred/internal/search"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// DefaultMaxResults is how many tools a ranked search returns when no
// limit is configured (DeerFlow's MAX_RESULTS).
const DefaultMaxResults = 5

// Catalog is the searchable set of one run's deferred tools. It is
// immutable and safe for concurrent use. Its index ([catalogIndex])
// depends only on the content of the tools, so runs whose tool lists have
// the same content share one ([CatalogCache]); the tools a search returns
// are the run's own.
type Catalog struct {
	idx   *catalogIndex
	tools []*tool.Tool // this run's tools, catalogue order: document d is tools[d]
}

// catalogIndex is the part of a catalogue that depends only on the
// content of its tool list: the names, the promotion hash, the search
// index and the prompt section. It is immutable once built.
type catalogIndex struct {
	byName map[string]int // name → document
	hash   string
	ix     *search.Index // over docs: document d is docs[d]
	prompt string        // the <available-deferred-tools> section
	// src is the content of the tool list the index was built from, as
	// given (nil and duplicate tools included); kept lists the positions
	// in src of the documents, nil when every tool of src is a document.
	src  []toolContent
	kept []int32
	// recent are the last two lists of other tool values found to match
	// src (CatalogCache.lookup), kept so that a list handed out again
	// compares by identity alone.
	recent [2]atomic.Pointer[recentList]
	// hybrid embeds the catalogue when the cache that built it has
	// hybrid search (nil: lexical only); dense holds the vectors.
	hybrid *Hybrid
	dense  denseSlot
}

// NewCatalog builds the catalogue of tools, in the given order. Nil
// tools, tools without a name and later tools with an already-seen name
// are left out. Building precomputes the search index (tens of
// milliseconds for thousands of tools): a caller that builds catalogues
// for many runs should take them from a [CatalogCache], which builds one
// index per distinct tool list.
func NewCatalog(tools []*tool.Tool) *Catalog {
	return buildCatalogIndex(tools).catalog(tools)
}

// buildCatalogIndex builds the index of the tool list src.
func buildCatalogIndex(src []*tool.Tool) *catalogIndex {
	x := &catalogIndex{byName: make(map[string]int, len(src)), src: make([]toolContent, len(src))}
	docs := make([]*tool.Tool, 0, len(src))
	kept := make([]int32, 0, len(src))
	for i, t := range src {
		if t == nil {
			continue
		}
		x.src[i] = toolContent{present: true, name: t.Name, desc: t.Description, schema: t.InputSchema, server: t.Meta[serverKey]}
		if t.Name == "" {
			continue
		}
		if _, dup := x.byName[t.Name]; dup {
			continue
		}
		x.byName[t.Name] = len(docs)
		docs = append(docs, t)
		kept = append(kept, int32(i))
	}
	if len(kept) < len(src) {
		x.kept = kept
	}
	// The hash reads every schema byte and is independent of the index:
	// it runs beside the build, on another core when there is one.
	x.ix = search.Build(docs, func() { x.hash = catalogHash(docs) })
	names := make([]string, len(docs))
	for d, t := range docs {
		names[d] = t.Name
	}
	x.prompt = promptSection(names)
	return x
}

// catalog returns the catalogue of run, a tool list whose content is that
// of x.src ([catalogIndex.matches]): x's index over run's own tools.
func (x *catalogIndex) catalog(run []*tool.Tool) *Catalog {
	if x.kept == nil {
		return &Catalog{idx: x, tools: slices.Clone(run)}
	}
	tools := make([]*tool.Tool, len(x.kept))
	for d, i := range x.kept {
		tools[d] = run[i]
	}
	return &Catalog{idx: x, tools: tools}
}

// catalogHash is the first 16 hex digits of the SHA-256 of the tools'
// names, descriptions and schemas (as the MCP server sent them), sorted by
// name: it changes
// whenever membership or any schema changes, and does not depend on the
// order the MCP servers listed their tools in.
func catalogHash(tools []*tool.Tool) string {
	sorted := slices.Clone(tools)
	slices.SortFunc(sorted, func(a, b *tool.Tool) int { return cmp.Compare(a.Name, b.Name) })
	h := sha256.New()
	// Fields are copied into one buffer that is hashed when full: one
	// streaming pass, no per-field allocation.
	buf := make([]byte, 0, 64<<10)
	field := func(s []byte, str string) {
		l := uint64(len(s) + len(str))
		buf = binary.LittleEndian.AppendUint64(buf, l)
		buf = append(buf, s...)
		buf = append(buf, str...)
		if len(buf) >= 48<<10 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	for _, t := range sorted {
		// Length-prefixed fields, so that no two lists hash alike.
		field(nil, t.Name)
		field(nil, t.Description)
		field(parametersOf(t), "")
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// emptyParameters is the schema of a tool that declares none.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

func parametersOf(t *tool.Tool) json.RawMessage {
	if len(bytes.TrimSpace(t.InputSchema)) == 0 || bytes.Equal(bytes.TrimSpace(t.InputSchema), []byte("null")) {
		return emptyParameters
	}
	return t.InputSchema
}

// Hash returns the catalogue hash that scopes promotions: 16 hex digits.
func (c *Catalog) Hash() string { return c.idx.hash }

// Len returns the number of tools in the catalogue.
func (c *Catalog) Len() int { return len(c.tools) }

// Tools returns the catalogue's tools in catalogue order.
func (c *Catalog) Tools() []*tool.Tool { return slices.Clone(c.tools) }

// Names returns the tool names in catalogue order.
func (c *Catalog) Names() []string {
	out := make([]string, len(c.tools))
	for i, t := range c.tools {
		out[i] = t.Name
	}
	return out
}

// Has reports whether name is a deferred tool of this catalogue.
func (c *Catalog) Has(name string) bool {
	_, ok := c.idx.byName[name]
	return ok
}

// Promoted returns the names promoted in st that belong to this
// catalogue. Promotions recorded under another catalogue hash count for
// nothing.
func (c *Catalog) Promoted(st *thread.State) map[string]bool {
	out := make(map[string]bool)
	if st == nil || st.Promoted == nil || st.Promoted.CatalogHash != c.idx.hash {
		return out
	}
	for _, n := range st.Promoted.Names {
		if c.Has(n) {
			out[n] = true
		}
	}
	return out
}

// IsHidden reports whether name is deferred and not promoted in st: its
// schema must not reach the model and a call to it must be refused.
func (c *Catalog) IsHidden(st *thread.State, name string) bool {
	if !c.Has(name) {
		return false
	}
	if st == nil || st.Promoted == nil || st.Promoted.CatalogHash != c.idx.hash {
		return true
	}
	return !slices.Contains(st.Promoted.Names, name)
}

// Search runs a tool_search query and returns the matching tools:
//
//   - "select:a,b" returns exactly the named tools (names trimmed) in
//     catalogue order, however many there are;
//   - "+kw rest" returns tools whose lowercased name contains kw,
//     ranked by rest (regex matches first, then relevance), at most limit;
//   - anything else is a ranked search: tools whose "name description"
//     matches the query as a case-insensitive regular expression (a
//     literal when it is not a valid one) first, name matches before
//     description matches, then the other tools that share terms with the
//     query, by relevance, at most limit.
//
// A blank query and a bare "+" return nothing. limit ≤ 0 means
// [DefaultMaxResults].
func (c *Catalog) Search(query string, limit int) []*tool.Tool {
	if limit <= 0 {
		limit = DefaultMaxResults
	}
	q := strings.TrimSpace(query)
	switch {
	case q == "":
		return nil
	case strings.HasPrefix(q, "select:"):
		wanted := make(map[string]bool)
		for n := range strings.SplitSeq(q[len("select:"):], ",") {
			wanted[strings.TrimSpace(n)] = true
		}
		var out []*tool.Tool
		for _, t := range c.tools {
			if wanted[t.Name] {
				out = append(out, t)
			}
		}
		return out
	case strings.HasPrefix(q, "+"):
		return c.required(q[1:], limit)
	}
	return c.toolsOf(c.idx.ix.SearchDocs(q, limit), limit)
}

// required implements "+kw rest".
func (c *Catalog) required(s string, limit int) []*tool.Tool {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if s == "" {
		return nil
	}
	kw, rest := s, ""
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		kw, rest = s[:i], strings.TrimLeftFunc(s[i:], unicode.IsSpace)
	}
	kw = strings.ToLower(kw)
	var docs []int
	for d, t := range c.tools {
		if strings.Contains(strings.ToLower(t.Name), kw) {
			docs = append(docs, d)
		}
	}
	if rest != "" {
		c.idx.ix.Rerank(rest, docs)
	}
	return c.toolsOf(docs, limit)
}

func (c *Catalog) toolsOf(docs []int, limit int) []*tool.Tool {
	if limit > 0 && len(docs) > limit {
		docs = docs[:limit]
	}
	out := make([]*tool.Tool, len(docs))
	for i, d := range docs {
		out[i] = c.tools[d]
	}
	return out
}
