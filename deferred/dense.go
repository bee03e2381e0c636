package deferred

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// This file is the dense half of hybrid search: the texts a catalogue's
// documents are embedded from, the ranking by cosine similarity, the
// fusion with the lexical ranking, and the vector files of the cache.

// docText is what a document is embedded from: its name and description.
func docText(name, desc string) string { return name + "\n" + desc }

// docTexts returns the texts of x's documents, in document order.
func (x *catalogIndex) docTexts() []string {
	texts := make([]string, 0, len(x.byName))
	if x.kept == nil {
		for i := range x.src {
			texts = append(texts, docText(x.src[i].name, x.src[i].desc))
		}
		return texts
	}
	for _, i := range x.kept {
		texts = append(texts, docText(x.src[i].name, x.src[i].desc))
	}
	return texts
}

// SearchContext is [Catalog.Search] that also ranks by meaning when the
// catalogue came from a cache with hybrid search and its vectors are
// there: the ranked form fuses the lexical ranking with the ranking by
// similarity to the query's vector (reciprocal rank fusion). "select:"
// and "+" queries, a catalogue without vectors and a query that cannot be
// embedded in time are searched as Search does.
func (c *Catalog) SearchContext(ctx context.Context, query string, limit int) []*tool.Tool {
	h, v := c.idx.hybrid, c.idx.dense.vecs.Load()
	q := strings.TrimSpace(query)
	if h == nil || v == nil || q == "" || strings.HasPrefix(q, "select:") || strings.HasPrefix(q, "+") {
		return c.Search(query, limit)
	}
	if limit <= 0 {
		limit = DefaultMaxResults
	}
	qv, err := h.embedQuery(ctx, q)
	if err == nil && len(qv) != v.dim {
		err = fmt.Errorf("a query vector of %d dimensions for a catalogue of %d", len(qv), v.dim)
	}
	if err != nil {
		if ctx.Err() == nil {
			h.logger.Warn("tool_search: query not embedded; lexical ranking only", "err", err)
		}
		return c.Search(query, limit)
	}
	depth := max(fusionDepth, limit)
	return c.toolsOf(fuseRanks(c.idx.ix.SearchDocs(q, depth), v.top(qv, depth, float32(h.o.MinSimilarity))), limit)
}

// top returns the depth documents most similar to the unit vector q,
// best first (ties by document number), leaving out those whose
// similarity is below floor when floor is positive.
func (v *denseVectors) top(q []float32, depth int, floor float32) []int {
	n := len(v.data) / v.dim
	type scored struct {
		doc   int
		score float32
	}
	best := make([]scored, 0, depth+1)
	for d := range n {
		row := v.data[d*v.dim : (d+1)*v.dim]
		var s float32
		for i, f := range row {
			s += f * q[i]
		}
		if len(best) == depth && s <= best[len(best)-1].score || floor > 0 && s < floor {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, s, func(e scored, t float32) int { return cmp.Compare(t, e.score) })
		for i < len(best) && best[i].score == s {
			i++
		}
		best = slices.Insert(best, i, scored{d, s})
		if len(best) > depth {
			best = best[:depth]
		}
	}
	out := make([]int, len(best))
	for i, b := range best {
		out[i] = b.doc
	}
	return out
}

// fuseRanks is reciprocal rank fusion of two rankings: each document
// scores 1/(rrfK+rank) in each list it is in; higher first, ties in the
// order of the lexical list, then of the dense one.
func fuseRanks(lexical, dense []int) []int {
	score := map[int]float64{}
	var order []int
	for _, list := range [][]int{lexical, dense} {
		for r, d := range list {
			if _, seen := score[d]; !seen {
				order = append(order, d)
			}
			score[d] += 1 / float64(rrfK+r+1)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	return order
}

// vectorMagic starts a vector file, followed by the document count and
// the dimension (uint32, little-endian) and the float32 values.
var vectorMagic = []byte("ANTLVEC1")

// readVectorFile reads the cached vectors of key; nil and no error when
// there are none (or dir is ""), an error when the file is not what it
// should be.
func readVectorFile(dir, key string, docs int) (*denseVectors, error) {
	if dir == "" {
		return nil, nil
	}
	path := filepath.Join(dir, key+".vec")
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	want := int64(len(vectorMagic)+8) + int64(docs)*int64(maxEmbeddingDims)*4
	if info.Size() > want {
		return nil, fmt.Errorf("%s: %d bytes, more than %d tools can take", path, info.Size(), docs)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < len(vectorMagic)+8 || !bytes.Equal(b[:len(vectorMagic)], vectorMagic) {
		return nil, fmt.Errorf("%s: not a vector file", path)
	}
	head := b[len(vectorMagic):]
	n, dim := int(binary.LittleEndian.Uint32(head)), int(binary.LittleEndian.Uint32(head[4:]))
	body := head[8:]
	if n != docs || dim < 1 || dim > maxEmbeddingDims || len(body) != n*dim*4 {
		return nil, fmt.Errorf("%s: %d vectors of %d dimensions in %d bytes, want %d vectors", path, n, dim, len(body), docs)
	}
	v := &denseVectors{dim: dim, data: make([]float32, n*dim)}
	for i := range v.data {
		v.data[i] = math.Float32frombits(binary.LittleEndian.Uint32(body[i*4:]))
	}
	return v, nil
}

// writeVectorFile caches v under key atomically, then removes the oldest
// vector files beyond maxFiles.
func writeVectorFile(dir, key string, v *denseVectors, maxFiles int) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b := make([]byte, 0, len(vectorMagic)+8+len(v.data)*4)
	b = append(b, vectorMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v.data)/v.dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(v.dim))
	for _, f := range v.data {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	if err := config.WriteFileAtomic(filepath.Join(dir, key+".vec"), b, 0o600); err != nil {
		return err
	}
	return pruneVectorFiles(dir, maxFiles)
}

// pruneVectorFiles removes the least recently written vector files of dir
// beyond the newest maxFiles.
func pruneVectorFiles(dir string, maxFiles int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	type file struct {
		name string
		mod  int64
	}
	var files []file
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".vec") {
			continue
		}
		if info, err := e.Info(); err == nil {
			files = append(files, file{e.Name(), info.ModTime().UnixNano()})
		}
	}
	if len(files) <= maxFiles {
		return nil
	}
	slices.SortFunc(files, func(a, b file) int { return cmp.Compare(b.mod, a.mod) })
	var errs []error
	for _, f := range files[maxFiles:] {
		errs = append(errs, os.Remove(filepath.Join(dir, f.name)))
	}
	return errors.Join(errs...)
}
