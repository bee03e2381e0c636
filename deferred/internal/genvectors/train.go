package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// trainOptions are the generator's settings; the shipped table's are
// the defaults of main's flags, written into its header.
type trainOptions struct {
	minCount   int     // a term needs this many occurrences to get a vector
	maxWords   int     // at most this many terms, the most frequent
	window     int     // co-occurrence window each side, weighted 1/distance
	dims       int     // vector dimensions
	oversample int     // extra columns of the randomized SVD
	powerIters int     // its power iterations
	alpha      float64 // context-distribution smoothing of PMI
	eigPower   float64 // vectors are U·Σ^eigPower
	seed       uint64  // of the SVD's random start
	workers    int     // goroutines of the matrix products (results do not depend on it)
}

// vocabulary returns the terms the vectors are for, sorted, with their
// ids as a map: letter-only terms of at least two letters occurring at
// least minCount times, the maxWords most frequent (ties by term).
func vocabulary(units [][]string, o trainOptions) ([]string, map[string]int32) {
	counts := make(map[string]int)
	for _, u := range units {
		for _, t := range u {
			counts[t]++
		}
	}
	type wc struct {
		w string
		n int
	}
	var all []wc
	for w, n := range counts {
		if n >= o.minCount && len(w) >= 2 && lettersOnly(w) {
			all = append(all, wc{w, n})
		}
	}
	slices.SortFunc(all, func(a, b wc) int {
		if a.n != b.n {
			return cmp.Compare(b.n, a.n)
		}
		return cmp.Compare(a.w, b.w)
	})
	if len(all) > o.maxWords {
		all = all[:o.maxWords]
	}
	words := make([]string, len(all))
	for i, x := range all {
		words[i] = x.w
	}
	slices.Sort(words)
	ids := make(map[string]int32, len(words))
	for i, w := range words {
		ids[w] = int32(i)
	}
	return words, ids
}

func lettersOnly(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// csr is a sparse matrix in compressed rows.
type csr struct {
	n      int
	rowPtr []int
	col    []int32
	val    []float32
}

// cooccurrences counts, for each pair of vocabulary terms within window
// words of each other in a unit (out-of-vocabulary terms removed first),
// 1/distance, in both directions.
func cooccurrences(units [][]string, ids map[string]int32, window int) *csr {
	// Each pair is packed as row<<40 | col<<16 | distance and sorted, so
	// the counts come out in one deterministic order without a map of
	// tens of millions of entries.
	var pairs []uint64
	var seq []int32
	for _, u := range units {
		seq = seq[:0]
		for _, t := range u {
			if id, ok := ids[t]; ok {
				seq = append(seq, id)
			}
		}
		for i, a := range seq {
			for d := 1; d <= window && i+d < len(seq); d++ {
				b := seq[i+d]
				pairs = append(pairs, uint64(a)<<40|uint64(b)<<16|uint64(d), uint64(b)<<40|uint64(a)<<16|uint64(d))
			}
		}
	}
	slices.Sort(pairs)
	m := &csr{n: len(ids), rowPtr: make([]int, len(ids)+1)}
	for i := 0; i < len(pairs); {
		key := pairs[i] >> 16
		var w float64
		for ; i < len(pairs) && pairs[i]>>16 == key; i++ {
			w += 1 / float64(pairs[i]&0xffff)
		}
		row := int(key >> 24)
		m.rowPtr[row+1]++
		m.col = append(m.col, int32(key&0xffffff))
		m.val = append(m.val, float32(w))
	}
	for r := range m.n {
		m.rowPtr[r+1] += m.rowPtr[r]
	}
	return m
}

// ppmi turns counts into positive pointwise mutual information, with the
// context distribution raised to alpha (Levy, Goldberg and Dagan 2015):
// max(0, log(c(w,c)·Σc^α / (c(w)·c(c)^α))).
func ppmi(m *csr, alpha float64) *csr {
	rowSum := make([]float64, m.n)
	colSum := make([]float64, m.n)
	for r := range m.n {
		for k := m.rowPtr[r]; k < m.rowPtr[r+1]; k++ {
			rowSum[r] += float64(m.val[k])
			colSum[m.col[k]] += float64(m.val[k])
		}
	}
	var colAlphaTotal float64
	colAlpha := make([]float64, m.n)
	for c, s := range colSum {
		colAlpha[c] = math.Pow(s, alpha)
		colAlphaTotal += colAlpha[c]
	}
	out := &csr{n: m.n, rowPtr: make([]int, m.n+1)}
	for r := range m.n {
		for k := m.rowPtr[r]; k < m.rowPtr[r+1]; k++ {
			c := m.col[k]
			v := math.Log(float64(m.val[k]) * colAlphaTotal / (rowSum[r] * colAlpha[c]))
			if v > 0 {
				out.col = append(out.col, c)
				out.val = append(out.val, float32(v))
			}
		}
		out.rowPtr[r+1] = len(out.col)
	}
	return out
}

// transpose returns mᵀ.
func (m *csr) transpose() *csr {
	t := &csr{n: m.n, rowPtr: make([]int, m.n+1), col: make([]int32, len(m.col)), val: make([]float32, len(m.val))}
	for _, c := range m.col {
		t.rowPtr[c+1]++
	}
	for r := range m.n {
		t.rowPtr[r+1] += t.rowPtr[r]
	}
	next := slices.Clone(t.rowPtr[:m.n])
	for r := range m.n {
		for k := m.rowPtr[r]; k < m.rowPtr[r+1]; k++ {
			c := m.col[k]
			t.col[next[c]] = int32(r)
			t.val[next[c]] = m.val[k]
			next[c]++
		}
	}
	return t
}

// mulDense returns m·x for a dense n×l x (row-major). Rows are split
// between workers; each output row is one worker's sum in a fixed order,
// so the result does not depend on the number of workers.
func (m *csr) mulDense(x []float64, l, workers int) []float64 {
	out := make([]float64, m.n*l)
	var wg sync.WaitGroup
	chunk := (m.n + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, m.n)
		wg.Go(func() {
			for r := lo; r < hi; r++ {
				dst := out[r*l : (r+1)*l]
				for k := m.rowPtr[r]; k < m.rowPtr[r+1]; k++ {
					v := float64(m.val[k])
					src := x[int(m.col[k])*l : (int(m.col[k])+1)*l]
					for j := range dst {
						dst[j] += float64(v * src[j])
					}
				}
			}
		})
	}
	wg.Wait()
	return out
}

// orthonormalize replaces the columns of the n×l y (row-major) by an
// orthonormal basis of their span (thin QR through LAPACK).
func orthonormalize(y []float64, n, l int) {
	a := blas64.General{Rows: n, Cols: l, Stride: l, Data: y}
	tau := make([]float64, l)
	work := make([]float64, 1)
	lapack64.Geqrf(a, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Geqrf(a, tau, work, len(work))
	lapack64.Orgqr(a, tau, work, len(work))
}

// svdVectors returns the word vectors of a: the top o.dims left singular
// vectors scaled by Σ^o.eigPower (Halko, Martinsson and Tropp's
// randomized range finder with power iterations, then the small problem
// solved exactly), one row of o.dims per word.
func svdVectors(a *csr, o trainOptions) ([]float64, error) {
	n, l := a.n, o.dims+o.oversample
	if n < l {
		return nil, fmt.Errorf("%d words are fewer than %d dimensions plus oversampling", n, l)
	}
	at := a.transpose()
	rng := splitmix{state: o.seed}
	omega := make([]float64, n*l)
	for i := range omega {
		omega[i] = rng.uniform()
	}
	y := a.mulDense(omega, l, o.workers)
	orthonormalize(y, n, l)
	for range o.powerIters {
		z := at.mulDense(y, l, o.workers)
		orthonormalize(z, n, l)
		y = a.mulDense(z, l, o.workers)
		orthonormalize(y, n, l)
	}
	// B = Qᵀ·A is l×n; Bᵀ = Aᵀ·Q. The left singular vectors of A are
	// Q times the eigenvectors of B·Bᵀ, its singular values the square
	// roots of their eigenvalues.
	bt := at.mulDense(y, l, o.workers)
	bbt := mat.NewSymDense(l, nil)
	for i := range l {
		for j := i; j < l; j++ {
			var s float64
			for r := range n {
				s += float64(bt[r*l+i] * bt[r*l+j])
			}
			bbt.SetSym(i, j, s)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(bbt, true) {
		return nil, fmt.Errorf("eigendecomposition did not converge")
	}
	values := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	out := make([]float64, n*o.dims)
	for d := range o.dims {
		col := l - 1 - d // the largest first
		scale := math.Pow(math.Sqrt(max(values[col], 0)), o.eigPower)
		for r := range n {
			var s float64
			for k := range l {
				s += float64(y[r*l+k] * vecs.At(k, col))
			}
			out[r*o.dims+d] = s * scale
		}
		fixSign(out, n, o.dims, d)
	}
	return out, nil
}

// fixSign makes the largest-magnitude entry of column d positive, so
// that the sign of a singular vector, which is arbitrary, is fixed.
func fixSign(v []float64, n, dims, d int) {
	best, at := 0.0, 0
	for r := range n {
		if x := math.Abs(v[r*dims+d]); x > best {
			best, at = x, r
		}
	}
	if v[at*dims+d] < 0 {
		for r := range n {
			v[r*dims+d] = -v[r*dims+d]
		}
	}
}

// splitmix is SplitMix64, a fixed generator: the table must not depend
// on the random source of a Go release.
type splitmix struct{ state uint64 }

func (s *splitmix) next() uint64 {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// uniform returns a number in [-1, 1).
func (s *splitmix) uniform() float64 { return float64(s.next()>>11)/(1<<52) - 1 }
