package search

// Analyzer computes index terms as an index does for a tool's
// description or a query: words minus stop words and single characters,
// Snowball-stemmed (see the package comment). It is exported for the
// generators of the package's data files (deferred/internal/genvectors
// trains its word vectors on exactly the terms an index holds); the
// search itself does not use it. An Analyzer caches the stems it has
// computed and is not safe for concurrent use.
type Analyzer struct{ st stemmer }

// NewAnalyzer returns an Analyzer with an empty stem cache.
func NewAnalyzer() *Analyzer { return &Analyzer{st: stemmer{cache: make(map[string]string)}} }

// Append appends the index terms of text to dst, in order, and returns
// the extended slice.
func (a *Analyzer) Append(dst []string, text string) []string { return a.st.terms(dst, text) }
