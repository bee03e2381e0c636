package deferred

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of [HybridOptions].
const (
	DefaultQueryEmbedTimeout = 500 * time.Millisecond
	DefaultBuildEmbedTimeout = 10 * time.Minute
	defaultEmbedBatch        = 64
	// DefaultHybridMaxTools is the largest catalogue that gets vectors:
	// 20,000 tools of 1,536 dimensions hold about 120 MB.
	DefaultHybridMaxTools = 20_000
	defaultMaxCacheFiles  = 16
	// maxPendingBuilds bounds the catalogues waiting for their turn to be
	// embedded; one more stays lexical (a catalogue that changes faster
	// than it can be embedded must not pile up goroutines).
	maxPendingBuilds = 4
	// fusionDepth is how many documents of each ranking take part in
	// the fusion (at least; more when a search asks for more).
	fusionDepth = 50
	// rrfK is reciprocal rank fusion's constant (Cormack et al.).
	rrfK = 60
)

// HybridOptions configure [NewHybrid]. Embedder is required; the zero
// value of every other field is its default.
type HybridOptions struct {
	// Embedder embeds the tools' texts and the queries.
	Embedder Embedder
	// CacheDir keeps each catalogue's vectors on disk, keyed by the
	// embedder and the catalogue's texts, so a restart does not embed
	// them again; "" keeps them in memory only.
	CacheDir string
	// QueryTimeout bounds embedding one query (default
	// DefaultQueryEmbedTimeout): past it the search is lexical only.
	QueryTimeout time.Duration
	// BuildTimeout bounds embedding one catalogue (default
	// DefaultBuildEmbedTimeout).
	BuildTimeout time.Duration
	// BatchSize is how many texts one embeddings request carries
	// (default 64).
	BatchSize int
	// MaxTools is the largest catalogue that is embedded (default
	// DefaultHybridMaxTools); a larger one stays lexical, with a warning.
	MaxTools int
	// MaxCacheFiles is how many catalogues' vectors CacheDir keeps
	// (default 16); the least recently written are removed.
	MaxCacheFiles int
	// MinSimilarity is the least cosine similarity to the query a tool
	// needs to take part in the dense ranking; 0 (the default) sets no
	// floor, so the dense ranking always fills a search's results, even
	// for a query that means nothing. A useful floor depends on the
	// model: unrelated texts score about 0.1 with some models and 0.4
	// with others.
	MinSimilarity float64
	// Logger receives the fallbacks to lexical search (nil: discarded).
	Logger *slog.Logger
}

// Hybrid adds dense retrieval to the catalogues of a [CatalogCache]
// (CatalogCacheOptions.Hybrid): each catalogue is embedded once, in the
// background, and from then on a ranked tool_search fuses the lexical
// ranking with the ranking by cosine similarity to the query's vector
// (reciprocal rank fusion). Every failure (the endpoint down, a timeout, a
// malformed answer, a catalogue too large) leaves the search lexical and
// is logged; none reaches the model. One catalogue is embedded at a time.
//
// Create it with [NewHybrid] and Close it when the cache is no longer
// used: Close stops the builds under way and waits for them.
type Hybrid struct {
	o      HybridOptions
	logger *slog.Logger
	sem    chan struct{} // one catalogue build at a time
	stop   chan struct{} // closed by Close

	mu      sync.Mutex
	closed  bool // guarded by mu
	pending int  // builds started and not ended; guarded by mu
	wg      sync.WaitGroup
}

// NewHybrid returns a Hybrid over o.Embedder.
func NewHybrid(o HybridOptions) *Hybrid {
	if o.Embedder == nil {
		panic("deferred.NewHybrid: Embedder is nil")
	}
	o.QueryTimeout = cmpOr(o.QueryTimeout, DefaultQueryEmbedTimeout)
	o.BuildTimeout = cmpOr(o.BuildTimeout, DefaultBuildEmbedTimeout)
	o.BatchSize = cmpOr(o.BatchSize, defaultEmbedBatch)
	o.MaxTools = cmpOr(o.MaxTools, DefaultHybridMaxTools)
	o.MaxCacheFiles = cmpOr(o.MaxCacheFiles, defaultMaxCacheFiles)
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Hybrid{o: o, logger: logger, sem: make(chan struct{}, 1), stop: make(chan struct{})}
}

func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Close stops the catalogue builds under way and waits for them. Searches
// go on, lexical for catalogues not embedded yet.
func (h *Hybrid) Close() error {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.stop)
	}
	h.mu.Unlock()
	h.wg.Wait()
	return nil
}

// Wait blocks until c's catalogue is embedded, has failed to be, or ctx
// ends; it reports whether the catalogue has vectors. For tests and for
// callers that want the hybrid ranking from the first search.
func (h *Hybrid) Wait(ctx context.Context, c *Catalog) bool {
	d := &c.idx.dense
	if d.done == nil {
		return false
	}
	select {
	case <-d.done:
	case <-ctx.Done():
	}
	return d.vecs.Load() != nil
}

// denseSlot is a catalogue index's vectors: built at most once, in the
// background; vecs stays nil until they are there (and when they could
// not be made).
type denseSlot struct {
	once sync.Once
	done chan struct{} // closed when the build ended; nil without Hybrid
	vecs atomic.Pointer[denseVectors]
}

// denseVectors are a catalogue's unit-length vectors, document by
// document.
type denseVectors struct {
	dim  int
	data []float32 // len = documents × dim
}

// ensure starts embedding x's catalogue unless it was started before.
func (h *Hybrid) ensure(x *catalogIndex) {
	x.dense.once.Do(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.closed {
			close(x.dense.done)
			return
		}
		if h.pending >= maxPendingBuilds {
			close(x.dense.done)
			h.logger.Warn("tool_search: catalogue not embedded; its searches stay lexical",
				"tools", len(x.byName), "err", fmt.Sprintf("%d catalogues already wait to be embedded", h.pending))
			return
		}
		h.pending++
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			defer close(x.dense.done)
			defer func() {
				h.mu.Lock()
				h.pending--
				h.mu.Unlock()
			}()
			if err := h.build(x); err != nil {
				h.logger.Warn("tool_search: catalogue not embedded; its searches stay lexical", "tools", len(x.byName), "err", err)
			}
		}()
	})
}

// build embeds x's documents (or reads them from the cache) and sets its
// vectors.
func (h *Hybrid) build(x *catalogIndex) error {
	texts := x.docTexts()
	if len(texts) > h.o.MaxTools {
		return fmt.Errorf("%d tools, more than the %d hybrid search embeds", len(texts), h.o.MaxTools)
	}
	select {
	case h.sem <- struct{}{}:
		defer func() { <-h.sem }()
	case <-h.stop:
		return errors.New("closed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.o.BuildTimeout)
	defer cancel()
	go func() { // Close cancels the build; the deferred cancel ends it
		select {
		case <-h.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	key := h.cacheKey(texts)
	if v, err := readVectorFile(h.o.CacheDir, key, len(texts)); err == nil && v != nil {
		x.dense.vecs.Store(v)
		return nil
	} else if err != nil {
		h.logger.Warn("tool_search: cached vectors unreadable; embedding again", "err", err)
	}
	v, err := h.embedAll(ctx, texts)
	if err != nil {
		return err
	}
	x.dense.vecs.Store(v)
	if err := writeVectorFile(h.o.CacheDir, key, v, h.o.MaxCacheFiles); err != nil {
		h.logger.Warn("tool_search: vectors not cached", "err", err)
	}
	return nil
}

// embedAll embeds texts in batches into unit-length vectors.
func (h *Hybrid) embedAll(ctx context.Context, texts []string) (*denseVectors, error) {
	v := &denseVectors{}
	for start := 0; start < len(texts); start += h.o.BatchSize {
		batch := texts[start:min(start+h.o.BatchSize, len(texts))]
		vecs, err := h.o.Embedder.Embed(ctx, batch)
		if err != nil {
			return nil, err
		}
		for _, vec := range vecs {
			if v.dim == 0 {
				v.dim = len(vec)
				v.data = make([]float32, 0, len(texts)*v.dim)
			}
			if len(vec) != v.dim {
				return nil, fmt.Errorf("embeddings: vectors of %d and %d dimensions", v.dim, len(vec))
			}
			v.data = append(v.data, normalize(vec)...)
		}
	}
	return v, nil
}

// cacheKey names a catalogue's vectors: the embedder and every text, in
// order (documents are numbered by their order).
func (h *Hybrid) cacheKey(texts []string) string {
	s := sha256.New()
	s.Write([]byte(h.o.Embedder.ID()))
	for _, t := range texts {
		s.Write([]byte{0})
		s.Write([]byte(t))
	}
	return hex.EncodeToString(s.Sum(nil)[:16])
}

// embedQuery returns the unit vector of a query, within QueryTimeout.
func (h *Hybrid) embedQuery(ctx context.Context, q string) ([]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, h.o.QueryTimeout)
	defer cancel()
	vecs, err := h.o.Embedder.Embed(ctx, []string{q})
	if err != nil {
		return nil, err
	}
	return normalize(vecs[0]), nil
}

// normalize returns v scaled to unit length (v itself when it is zero).
func normalize(v []float32) []float32 {
	var sum float64
	for _, f := range v {
		sum += float64(f) * float64(f)
	}
	if sum == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = f * inv
	}
	return out
}
