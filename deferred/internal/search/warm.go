package search

// warmQuery is the query Build runs on each new index before returning
// it. It is not meant to find anything: it takes every path a query can
// take (words that are stemmed and matched against the lexicon, the
// derivations and the index's prefixes, a file path, punctuation that
// makes it a regular expression to parse and compile, Chinese words to
// segment and gloss), so that the first query a caller sends does not
// pay for first use: the index's query scratch arrays, the regex and
// Unicode tables, and the memory and code the search reads.
const warmQuery = "Read the files under /tmp/notes.txt (json)? 读取文件"

// warmUp runs warmQuery through the ranked search and the rerank of
// ix, discarding the results. It costs one cold query at build time
// (about 0.1–0.4 ms for a few hundred tools) and leaves one scratch in
// ix's pool.
func (ix *Index) warmUp() {
	ix.search(warmQuery, 5)
	if ix.n >= 2 {
		ix.Rerank(warmQuery, []int{0, 1})
	}
}

// loadSearchTables indexes the data files searches read (derivations.txt,
// cedict.txt and vectors.bin) and lists the verb forms of path roles
// (pathrole.go) if this process has not yet, so the first
// query of a catalogue does not pay for it: building an index calls it
// beside the analysis. It costs about 3 ms and 0.8 MB once per process
// (the word vectors' norms are most of it); a Chinese query can reach
// cedict.txt even when the catalogue has no Chinese.
func loadSearchTables() {
	derivations()
	cedict()
	vectors()
	pathVerbs()
}
