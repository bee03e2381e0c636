package search

import (
	"cmp"
	"slices"
)

// Document is one searchable tool. Build reads its fields in place and
// keeps the strings (not the schema) for regex matches.
type Document struct {
	// Name is the tool's name, as the model calls it.
	Name string
	// Server is the name of the server that provides the tool, "" for
	// none. The query naming it boosts its tools.
	Server string
	// Description is the tool's description.
	Description string
	// Schema is the JSON Schema of the tool's input: the names and
	// descriptions of its properties, and of the properties of object
	// properties one level down, are indexed. A malformed schema
	// contributes what was read before the error; nil or empty, nothing.
	Schema []byte
}

// Build builds the index of docs; a document's number is its index in
// docs. beside, when not nil, runs on a second goroutine during the build,
// after that goroutine's share of the analysis (on another core when there
// is one), so a caller can overlap independent work with the build; Build
// returns after beside has returned.
func Build(docs []Document, beside func()) *Index {
	return buildIndexSplit(docs, splitPoint(docs), beside)
}

// Search returns the numbers of the documents that match query, best
// first, at most limit of them (limit ≤ 0: all): the documents whose
// "name description" matches query as a case-insensitive regular
// expression (a literal when it is not a valid one) come first, name
// matches before description matches and ties by relevance, as in
// DeerFlow's regex search; then the other documents that share terms with
// the query, by BM25F relevance.
func (ix *Index) Search(query string, limit int) []int {
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

// Rerank orders the documents numbered docs, stably, by the number of
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
