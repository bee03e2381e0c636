package search

import (
	"cmp"
	"slices"

	"github.com/antlerhq/antler/tool"
)

// serverKey is the key of a tool's Meta that names its server
// (mcptools.MetaServer).
const serverKey = "mcp_server"

// Build builds the index of tools, which must not be nil; document d is
// tools[d]. It indexes each tool's name, description, the names and
// descriptions of its input schema's properties (and of object properties
// one level down; a malformed schema contributes what was read before the
// error) and its server, Meta["mcp_server"] ("" for none). The index keeps
// tools, not a copy: neither the slice nor the tools may change
// afterwards. beside, when not nil, runs on
// a second goroutine during the build, after that goroutine's share of
// the analysis (on another core when there is one), so that a caller can
// overlap independent work with the build; Build returns after beside has
// returned.
//
// Build takes the tools themselves, not a copy of their fields: copying
// 10,000 tools' fields cost 0.8 to 2 ms and 0.7 MB before the build could
// start.
func Build(tools []*tool.Tool, beside func()) *Index {
	return buildIndexSplit(tools, splitPoint(tools), beside)
}

// Search returns the tools that match query, best first, at most limit
// of them (limit ≤ 0: all): the tools whose "name description" matches
// query as a case-insensitive regular expression (a literal when it is
// not a valid one) come first, name matches before description matches
// and ties by relevance, as in DeerFlow's regex search; then the other
// tools that share terms with the query, by BM25F relevance.
func (ix *Index) Search(query string, limit int) []*tool.Tool {
	docs := ix.SearchDocs(query, limit)
	out := make([]*tool.Tool, len(docs))
	for i, d := range docs {
		out[i] = ix.tools[d]
	}
	return out
}

// SearchDocs is [Index.Search] returning document numbers (indexes into
// the tools given to Build) instead of tools, for a caller that maps them
// to tools of its own with the same content (package deferred shares one
// index between runs whose tools are copies of each other).
func (ix *Index) SearchDocs(query string, limit int) []int {
	docs := ix.search(query, limit)
	if limit > 0 && len(docs) > limit {
		docs = docs[:limit]
	}
	out := make([]int, len(docs))
	for i, s := range docs {
		out[i] = int(s.doc)
	}
	return out
}

func (ix *Index) search(q string, limit int) []scored {
	rk := ix.newRanking(q)
	defer rk.release()
	if limit <= 0 || ix.p.repeatsLast == 0 || !ix.nameRepeats {
		return ix.rankedHits(rk, q, limit)
	}
	return ix.repeatsLast(rk, ix.rankedHits(rk, q, limit+repeatSlack), limit)
}

// rankedHits is the ranked search of q with its ranking rk: DeerFlow's
// regex hits first, when regex_first is on, then the best of the rest.
func (ix *Index) rankedHits(rk *ranking, q string, limit int) []scored {
	if ix.p.regexFirst == 0 {
		return rk.top(limit)
	}
	hits := ix.regexHits(compileCatalogRegex(q))
	if len(hits) == 0 {
		return rk.top(limit)
	}
	relevance := make(map[int32]float64, len(hits))
	for _, h := range hits {
		relevance[h.doc] = rk.score(h.doc)
	}
	slices.SortStableFunc(hits, func(a, b scored) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(relevance[b.doc], relevance[a.doc])
	})
	if limit > 0 && len(hits) >= limit {
		return hits[:limit]
	}
	// Fill up with the best of the rest.
	more := rk.top(max(limit, 0) + len(hits))
	if limit <= 0 {
		more = rk.top(0)
	}
	for _, s := range more {
		if _, dup := relevance[s.doc]; !dup {
			hits = append(hits, s)
		}
	}
	return hits
}

// Rerank orders the documents docs (indexes into the tools given to
// Build), stably, by the number of
// non-overlapping matches of query in their "name description" (query
// compiled as in [Index.Search]), as DeerFlow orders the tools of its
// "+keyword rest" form; relevance to query breaks ties and orders the
// documents without a match.
func (ix *Index) Rerank(query string, docs []int) {
	if len(docs) < 2 {
		return
	}
	cr := compileCatalogRegex(query)
	rk := ix.newRanking(query)
	defer rk.release()
	cands := make([]scored, len(docs))
	for i, d := range docs {
		n := cr.count(ix.text(int32(d)))
		// Regex matches rank first (DeerFlow's order); relevance, below
		// 1 after squashing, breaks ties and ranks the rest.
		r := rk.score(int32(d))
		cands[i] = scored{doc: int32(d), score: float64(n) + r/(1+r)}
	}
	slices.SortStableFunc(cands, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	for i, c := range cands {
		docs[i] = int(c.doc)
	}
}
