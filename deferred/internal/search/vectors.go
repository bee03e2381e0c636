package search

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// vectorsData is the word-vector table of deferred/internal/genvectors
// (learnt from Debian's package descriptions and WordNet's glosses, never
// from tool catalogues or queries; docs/search-vectors.md): a header line
// "antler-word-vectors 1 <words> <dims> <settings>", the words (index
// terms, sorted) one per line, then each word's vector as dims signed
// bytes.
//
//go:generate ../../../scripts/genvectors
//go:embed vectors.bin
var vectorsData string

// wordVectors is vectorsData parsed: constant data shared by every index.
type wordVectors struct {
	words []string // sorted; each a substring of vectorsData
	dims  int
	data  string    // len(words)·dims signed bytes
	inv   []float32 // by word: 1 / the length of its vector (0 for a zero vector)
}

// vectors is the parsed table, once per process (about 1 ms).
var vectors = sync.OnceValue(func() *wordVectors {
	v, err := parseVectors(vectorsData)
	if err != nil {
		panic(err) // the embedded file is checked by TestVectorsTable
	}
	return v
})

func parseVectors(data string) (*wordVectors, error) {
	head, rest, ok := strings.Cut(data, "\n")
	f := strings.Fields(head)
	if !ok || len(f) < 4 || f[0] != "antler-word-vectors" || f[1] != "1" {
		return nil, fmt.Errorf("word vectors: bad header %.80q", head)
	}
	n, err1 := strconv.Atoi(f[2])
	dims, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || n < 0 || dims <= 0 {
		return nil, fmt.Errorf("word vectors: bad sizes in header %.80q", head)
	}
	v := &wordVectors{words: make([]string, n), dims: dims}
	for i := range n {
		w, r, ok := strings.Cut(rest, "\n")
		if !ok || (i > 0 && w <= v.words[i-1]) {
			return nil, fmt.Errorf("word vectors: word %d (%.40q) missing or out of order", i+1, w)
		}
		v.words[i], rest = w, r
	}
	if len(rest) != n*dims {
		return nil, fmt.Errorf("word vectors: %d bytes of vectors, want %d·%d", len(rest), n, dims)
	}
	v.data = rest
	v.inv = make([]float32, n)
	for i := range n {
		var norm float64
		for _, b := range []byte(rest[i*dims : (i+1)*dims]) {
			x := float64(int8(b))
			norm += x * x
		}
		if norm > 0 {
			v.inv[i] = float32(1 / math.Sqrt(norm))
		}
	}
	return v, nil
}

// lookup returns the vector number of the index term w, or -1.
func (v *wordVectors) lookup(w string) int32 {
	if i, ok := slices.BinarySearch(v.words, w); ok {
		return int32(i)
	}
	return -1
}

// unit writes vector i, scaled to unit length, into dst (len dims).
func (v *wordVectors) unit(i int32, dst []float32) {
	raw := v.data[int(i)*v.dims : (int(i)+1)*v.dims]
	inv := v.inv[i]
	for k := range dst {
		dst[k] = float32(int8(raw[k])) * inv
	}
}
