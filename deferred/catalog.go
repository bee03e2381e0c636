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
	"unicode"

	"github.com/antlerhq/antler/deferred/internal/search"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// DefaultMaxResults is how many tools a ranked search returns when no
// limit is configured (DeerFlow's MAX_RESULTS).
const DefaultMaxResults = 5

// Catalog is the immutable, searchable set of a run's deferred tools. It
// is built once per distinct tool list and is safe for concurrent use.
type Catalog struct {
	tools  []*tool.Tool // catalogue order (the order given to NewCatalog)
	byName map[string]int
	hash   string
	ix     *search.Index // over tools: document d is tools[d]
}

// NewCatalog builds the catalogue of tools, in the given order. Nil
// tools, tools without a name and later tools with an already-seen name
// are left out. Building precomputes the search index, so a caller should
// build one catalogue per tool list and share it between runs.
func NewCatalog(tools []*tool.Tool) *Catalog {
	c := &Catalog{byName: make(map[string]int, len(tools))}
	for _, t := range tools {
		if t == nil || t.Name == "" {
			continue
		}
		if _, dup := c.byName[t.Name]; dup {
			continue
		}
		c.byName[t.Name] = len(c.tools)
		c.tools = append(c.tools, t)
	}
	// The hash reads every schema byte and is independent of the index:
	// it runs beside the build, on another core when there is one.
	c.ix = search.Build(c.tools, func() { c.hash = catalogHash(c.tools) })
	return c
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
func (c *Catalog) Hash() string { return c.hash }

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
	_, ok := c.byName[name]
	return ok
}

// Promoted returns the names promoted in st that belong to this
// catalogue. Promotions recorded under another catalogue hash count for
// nothing.
func (c *Catalog) Promoted(st *thread.State) map[string]bool {
	out := make(map[string]bool)
	if st == nil || st.Promoted == nil || st.Promoted.CatalogHash != c.hash {
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
	if st == nil || st.Promoted == nil || st.Promoted.CatalogHash != c.hash {
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
	return c.ix.Search(q, limit)
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
		c.ix.Rerank(rest, docs)
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
