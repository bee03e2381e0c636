package search

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

const (
	// denseWeight scales the word-vector score a document the query
	// matches gets on top of its BM25F score (0 disables it): the cosine
	// similarity of the query's vector and the document's, less
	// denseFloor, where positive. A query word the catalogue lacks
	// counts in the query's vector at IDF denseUnknownIDF (a word it
	// has, at its IDF in the catalogue). Chosen by cross-validation by
	// server (docs/benchmarks.md).
	denseWeight     = 20
	denseFloor      = 0.1
	denseUnknownIDF = 3
	// denseCandidates bounds the documents scored: the best this many by
	// BM25F, so that a long query over a large catalogue (which matches
	// thousands of tools) does not pay a vector product for each.
	denseCandidates = 50
)

// buildDocVectors lays out each document's unit vector: the sum of its
// terms' word vectors, each weighted by the term's IDF and its saturated
// BM25F frequency in the document. Terms without a vector (names,
// numbers, words rare in the training text) add nothing. The documents
// are split in two halves summed side by side (each document's sum runs
// in term order either way, so the vectors do not depend on the split).
func (ix *Index) buildDocVectors() {
	v := vectors()
	ix.docVec = make([]float32, ix.n*v.dims)
	ix.termVec = make([]int32, len(ix.termStr))
	for id, t := range ix.termStr {
		ix.termVec[id] = v.lookup(t)
	}
	h := int32(ix.n / 2)
	var wg sync.WaitGroup
	wg.Go(func() { ix.sumDocVectors(h, int32(ix.n)) })
	ix.sumDocVectors(0, h)
	wg.Wait()
}

// sumDocVectors computes the vectors of documents [from, to).
func (ix *Index) sumDocVectors(from, to int32) {
	v := vectors()
	dims := v.dims
	unit := make([]float32, dims)
	for id, i := range ix.termVec {
		if i < 0 {
			continue
		}
		ps := ix.postings[id]
		lo, _ := slices.BinarySearchFunc(ps, from, func(p posting, d int32) int { return cmp.Compare(p.doc, d) })
		if lo == len(ps) || ps[lo].doc >= to {
			continue
		}
		v.unit(i, unit)
		idf := ix.idf[id]
		for _, p := range ps[lo:] {
			if p.doc >= to {
				break
			}
			w := idf * p.tf / (p.tf + 1)
			row := ix.docVec[int(p.doc)*dims : (int(p.doc)+1)*dims]
			for k, x := range unit {
				row[k] += w * x
			}
		}
	}
	for d := from; d < to; d++ {
		normalize(ix.docVec[int(d)*dims : (int(d)+1)*dims])
	}
}

// normalize scales row to unit length (a zero row stays zero).
func normalize(row []float32) {
	var s float64
	for _, x := range row {
		s += float64(x * x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for k := range row {
		row[k] *= inv
	}
}

// addDense adds the word-vector score (see denseWeight) to the base
// score of each document r already matched (the denseCandidates best):
// it reorders the documents that share words with the query, and never
// adds one that shares none, so a query of words unrelated to the
// catalogue still finds nothing.
func (ix *Index) addDense(r *ranking, words []queryStem) {
	if len(r.touched) == 0 {
		return
	}
	v := vectors()
	dims := v.dims
	sc := r.sc
	if len(sc.dense) != 2*dims {
		sc.dense = make([]float32, 2*dims)
	}
	qv, unit := sc.dense[:dims], sc.dense[dims:]
	clear(qv)
	found := false
	for _, w := range words {
		var i int32
		idf := float32(ix.p.denseIDF)
		if w.id >= 0 {
			i, idf = ix.termVec[w.id], ix.idf[w.id]
		} else {
			i = v.lookup(w.term)
		}
		if i < 0 {
			continue
		}
		v.unit(i, unit)
		for k, x := range unit {
			qv[k] += idf * x
		}
		found = true
	}
	if !found {
		return
	}
	normalize(qv)
	floor := float32(ix.p.denseFloor)
	cut := 0.0 // the least base score scored
	if len(r.touched) > denseCandidates {
		vals := sc.cutVals[:0]
		for _, d := range r.touched {
			vals = append(vals, r.base[d])
		}
		cut = kthLargest(vals, denseCandidates)
		sc.cutVals = vals
	}
	for _, d := range r.touched {
		if r.base[d] < cut {
			continue
		}
		row := ix.docVec[int(d)*dims : (int(d)+1)*dims]
		var s float32
		for k, x := range row {
			s += x * qv[k]
		}
		if s > floor {
			r.base[d] += ix.p.dense * float64(s-floor)
		}
	}
}

// kthLargest returns the k-th largest of vals (1 ≤ k ≤ len(vals)),
// reordering vals: Hoare's selection with a median-of-three pivot, linear
// on average, where the insertion of topK would be quadratic in k.
func kthLargest(vals []float64, k int) float64 {
	lo, hi, want := 0, len(vals)-1, k-1 // want: index in descending order
	for lo < hi {
		mid := lo + (hi-lo)/2
		pivot := median3(vals[lo], vals[mid], vals[hi])
		i, j := lo, hi
		for i <= j {
			for vals[i] > pivot {
				i++
			}
			for vals[j] < pivot {
				j--
			}
			if i <= j {
				vals[i], vals[j] = vals[j], vals[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return vals[want]
		}
	}
	return vals[want]
}

func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}
