// Command genvectors writes deferred/internal/search/vectors.bin, the
// word vectors tool_search uses to match a query word to the catalogue's
// words of related meaning (weather → forecast). It learns them from
// public text that reaches this machine as Debian packages, never from
// tool catalogues or queries:
//
//   - the English package descriptions of Debian 12 "bookworm" (12.15,
//     main/i18n/Translation-en), about 64,000 descriptions of software;
//   - the synsets and glosses of WordNet 3.0 (Debian package
//     wordnet-base 1:3.0-37).
//
// scripts/genvectors downloads both at their pinned versions, checks
// their SHA-256 and runs this command; it reproduces the shipped table
// bit for bit (docs/search-vectors.md).
//
// The method is PPMI and truncated SVD (Levy, Goldberg and Dagan,
// "Improving Distributional Similarity with Lessons Learned from Word
// Embeddings", 2015): text is analysed into index terms exactly as the
// search analyses descriptions (search.Analyzer: stop words out,
// Snowball stems), terms co-occurring within a window are counted
// (1/distance), counts become positive pointwise mutual information
// with a smoothed context distribution, and a randomized SVD keeps the
// top dimensions. Each vector is then scaled to unit length and
// quantised to signed bytes.
//
// Every step runs in a fixed order with a fixed pseudo-random start, so
// the output depends only on the inputs and the flags (on amd64: other
// architectures may fuse floating-point operations in the linear algebra
// library and differ in the last bits before quantisation).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/antlerhq/antler/deferred/internal/search"
)

func main() {
	desc := flag.String("descriptions", "", "Debian Translation-en `file` (uncompressed)")
	wordnet := flag.String("wordnet", "", "WordNet 3.0 database `directory` (data.noun, ...)")
	out := flag.String("o", "vectors.bin", "output `file`")
	o := defaultOptions()
	flag.IntVar(&o.minCount, "min-count", o.minCount, "occurrences a term needs to get a vector")
	flag.IntVar(&o.maxWords, "max-words", o.maxWords, "at most this many terms, the most frequent")
	flag.IntVar(&o.window, "window", o.window, "co-occurrence window each side")
	flag.IntVar(&o.dims, "dims", o.dims, "vector dimensions")
	flag.IntVar(&o.powerIters, "power-iters", o.powerIters, "power iterations of the randomized SVD")
	flag.Float64Var(&o.alpha, "alpha", o.alpha, "context-distribution smoothing")
	flag.Float64Var(&o.eigPower, "eig-power", o.eigPower, "vectors are U·Σ^p")
	flag.Parse()
	if err := run(*desc, *wordnet, *out, o); err != nil {
		fmt.Fprintln(os.Stderr, "genvectors:", err)
		os.Exit(1)
	}
}

func defaultOptions() trainOptions {
	return trainOptions{
		minCount: 10, maxWords: 30000, window: 5, dims: 96, oversample: 24, powerIters: 3,
		alpha: 0.75, eigPower: 0.5, seed: 1, workers: runtime.GOMAXPROCS(0),
	}
}

func run(descPath, wordnetDir, out string, o trainOptions) error {
	if descPath == "" || wordnetDir == "" {
		return fmt.Errorf("-descriptions and -wordnet are required")
	}
	c := newCorpus()
	an := search.NewAnalyzer()
	f, err := os.Open(descPath)
	if err != nil {
		return err
	}
	err = c.readDescriptions(an, f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", descPath, err)
	}
	if err := c.readWordNet(an, wordnetDir); err != nil {
		return err
	}
	table, err := train(c.units, o)
	if err != nil {
		return err
	}
	return writeFileAtomic(out, table)
}

// train returns the table of the corpus's units.
func train(units [][]string, o trainOptions) ([]byte, error) {
	words, ids := vocabulary(units, o)
	counts := cooccurrences(units, ids, o.window)
	vecs, err := svdVectors(ppmi(counts, o.alpha), o)
	if err != nil {
		return nil, err
	}
	return encodeTable(words, vecs, o), nil
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it into place.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
