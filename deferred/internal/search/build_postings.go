package search

import "sync"

// postingsInput is what the postings are computed from: the term ids of
// every document, field after field (see fieldBuild), the field
// lengths, the compound parts of name terms and the mean field lengths.
type postingsInput struct {
	n, nt    int
	flat     []int32
	off      []int32 // document d's field k is flat[off[d*numFields+k]:off[d*numFields+k+1]]
	lens     []int32 // by document and field, compound parts included
	compound [][]int32
	avg      [numFields]float64
	field    [numFields]fieldParam // BM25F weight and b by field
}

// postings lays out each term's postings (CSR, documents ascending): the
// documents are split in two halves, which count their document
// frequencies and then write their postings, into disjoint places, side
// by side.
func (in *postingsInput) postings() [][]posting {
	n, nt := in.n, in.nt
	// The halves hold about as many terms each.
	h := n
	for d := range n {
		if 2*in.off[d*numFields] >= int32(len(in.flat)) {
			h = d
			break
		}
	}
	bounds := [2][2]int{{0, h}, {h, n}}
	var df [2][]int32
	both := func(f func(half int)) {
		var wg sync.WaitGroup
		wg.Go(func() { f(1) })
		f(0)
		wg.Wait()
	}
	both(func(half int) {
		df[half] = in.count(bounds[half][0], bounds[half][1])
	})
	// Half 0's postings of a term come first, then half 1's.
	start := make([]int32, nt+1)
	fill := [2][]int32{make([]int32, nt), make([]int32, nt)}
	for id := range nt {
		fill[0][id] = start[id]
		fill[1][id] = start[id] + df[0][id]
		start[id+1] = fill[1][id] + df[1][id]
	}
	all := make([]posting, start[nt])
	both(func(half int) {
		in.fill(bounds[half][0], bounds[half][1], fill[half], all)
	})
	out := make([][]posting, nt)
	for id := range nt {
		out[id] = all[start[id]:start[id+1]:start[id+1]]
	}
	return out
}

// count returns the document frequency of each term in documents
// [from, to).
func (in *postingsInput) count(from, to int) []int32 {
	df := make([]int32, in.nt)
	last := make([]int32, in.nt) // by term: the last document counted, plus one
	for d := from; d < to; d++ {
		mark := int32(d + 1)
		add := func(id int32) {
			if last[id] != mark {
				last[id] = mark
				df[id]++
			}
		}
		for k := range numFields {
			a, b := in.off[d*numFields+k], in.off[d*numFields+k+1]
			for _, id := range in.flat[a:b] {
				add(id)
				if k == fieldName || k == fieldServer {
					for _, p := range in.compound[id] {
						add(p)
					}
				}
			}
		}
	}
	return df
}

// fill writes the postings of documents [from, to) into all, the next
// one of term id at fill[id]. A document's pseudo term frequencies sum
// its terms' field-normalised frequencies, fields in order.
func (in *postingsInput) fill(from, to int, fill []int32, all []posting) {
	acc := make([]float64, in.nt)
	var touched []int32
	for d := from; d < to; d++ {
		touched = touched[:0]
		for k := range numFields {
			l := in.lens[d*numFields+k]
			if l == 0 {
				continue
			}
			fp := in.field[k]
			norm := fp.weight / (1 - fp.b + fp.b*float64(l)/in.avg[k])
			add := func(id int32) {
				if acc[id] == 0 {
					touched = append(touched, id)
				}
				acc[id] += norm
			}
			a, b := in.off[d*numFields+k], in.off[d*numFields+k+1]
			if k == fieldName || k == fieldServer {
				for _, id := range in.flat[a:b] {
					add(id)
					for _, p := range in.compound[id] {
						add(p)
					}
				}
				continue
			}
			for _, id := range in.flat[a:b] {
				add(id)
			}
		}
		for _, id := range touched {
			all[fill[id]] = posting{doc: int32(d), tf: float32(acc[id])}
			fill[id]++
			acc[id] = 0
		}
	}
}
