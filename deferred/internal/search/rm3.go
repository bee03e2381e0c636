package search

import (
	"cmp"
	"slices"
)

// forwardIndex inverts postings: by document, its terms and their pseudo
// term frequencies (posting.doc holds the term id), terms ascending.
func forwardIndex(postings [][]posting, n int) [][]posting {
	out := make([][]posting, n)
	for id, ps := range postings {
		for _, p := range ps {
			out[p.doc] = append(out[p.doc], posting{doc: int32(id), tf: p.tf})
		}
	}
	return out
}

// feedback returns the RM3 expansion of a query whose groups were
// ranked as first (see [RM3]): one single-term group per expansion term,
// none for a term the groups already hold.
func (ix *Index) feedback(first *ranking, groups [][]qterm) [][]qterm {
	opt := ix.p.rm3
	top := first.top(opt.Docs)
	return expansion(ix.forward, ix.idf, top, groups, opt)
}

// expansion weighs the terms of the documents top by the relevance
// model: P(d) is d's share of the top scores, P(t|d) t's share of d's
// pseudo term frequencies; a term's weight is the sum over documents of
// P(d)·P(t|d), times its IDF so that words every tool carries do not
// crowd out the telling ones. The opt.Terms heaviest terms not in groups
// come back, the heaviest at opt.Weight and the rest in proportion,
// heaviest first, ties by term id.
func expansion(forward [][]posting, idf []float32, top []scored, groups [][]qterm, opt RM3) [][]qterm {
	total := 0.0
	for _, s := range top {
		total += s.score
	}
	if total <= 0 {
		return nil
	}
	have := make(map[int32]bool)
	for _, g := range groups {
		for _, q := range g {
			have[q.id] = true
		}
	}
	weight := make(map[int32]float64)
	for _, s := range top {
		terms := forward[s.doc]
		sum := 0.0
		for _, p := range terms {
			sum += float64(p.tf)
		}
		if sum <= 0 {
			continue
		}
		for _, p := range terms {
			if !have[p.doc] {
				weight[p.doc] += s.score / total * float64(p.tf) / sum * float64(idf[p.doc])
			}
		}
	}
	type tw struct {
		id int32
		w  float64
	}
	all := make([]tw, 0, len(weight))
	for id, w := range weight {
		if w > 0 {
			all = append(all, tw{id, w})
		}
	}
	slices.SortFunc(all, func(a, b tw) int {
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	if len(all) > opt.Terms {
		all = all[:opt.Terms]
	}
	out := make([][]qterm, len(all))
	for i, t := range all {
		out[i] = []qterm{{t.id, opt.Weight * t.w / all[0].w}}
	}
	return out
}
