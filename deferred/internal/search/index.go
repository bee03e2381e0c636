package search

import (
	"slices"
	"strings"
	"sync"

	"github.com/antlerhq/antler/tool"
)

// The fields of a tool that ranked search reads.
const (
	fieldName = iota
	fieldServer
	fieldDescription
	fieldParamName
	fieldParamDescription
	fieldLead // the description's first sentence (see leadEnd)
	numFields
)

// fieldParams are the BM25F weight and length normalisation (b) of each
// field. The name says most about what a tool does and is short, so it
// weighs most and is barely length-normalised; parameter descriptions are
// long and often generic ("the page number"), so they weigh least. The
// lead (first sentence) of the description says what the tool is for;
// the rest is usually usage notes, so the lead counts again on its own,
// barely length-normalised, and a tool with a long manual-like
// description is not buried by it.
var fieldParams = [numFields]fieldParam{
	fieldName:             {weight: 3.0, b: 0.3},
	fieldServer:           {weight: 1.5, b: 0.3},
	fieldDescription:      {weight: 1.0, b: 0.75},
	fieldParamName:        {weight: 0.7, b: 0.5},
	fieldParamDescription: {weight: 0.4, b: 0.75},
	fieldLead:             {weight: 2.0, b: 0.3},
}

const (
	// bm25K1 is BM25's term-frequency saturation.
	bm25K1 = 1.2
	// nameCoverageBoost multiplies a tool's score by 1+boost×coverage,
	// where coverage is the share of the tool's name terms that the query
	// contains: a query naming most of "get_stock_price" is about it.
	nameCoverageBoost = 0.6
	// serverBoost multiplies the score of a tool whose whole server name
	// occurs in the query ("... on GitHub" → the github server's tools).
	serverBoost = 0.5
	// exactNameBoost multiplies the score of a tool whose full name
	// occurs verbatim in the query.
	exactNameBoost = 2.0
	// synonymWeight is the weight of a word of the query word's lexicon
	// groups (lexicon.txt).
	synonymWeight = 0.5
	// derivationWeight is the weight of a derivationally related form of
	// the query word (derivations.txt: conversion → convert).
	derivationWeight = 0.5
	// nameBigramWeight scales the bonus, the mean IDF of the two terms,
	// of a tool whose name holds two consecutive query words in order.
	nameBigramWeight = 0.5
	// pathFileWeight is the weight of the term "file" added to a query
	// that mentions a file path ("save it to /root/x.md"), and of "url"
	// added to one that mentions a web address.
	pathFileWeight = 0.5
	// pathRoleWeight is the weight of the terms "write" and "file", or
	// "read" and "file", added to a query whose path a verb or a
	// preposition says is written or read (see scanLocators).
	pathRoleWeight = 1.0
	// camelPartWeight is the weight of a part of a camelCase query word
	// whose whole the catalogue has as a word ("YouTube": youtube at 1,
	// tube at camelPartWeight), so the catalogue's "YouTube", which is
	// indexed as you and tube, still matches.
	camelPartWeight = 0.5
	// prefixWeight is the weight of a truncation match (0 disables);
	// minPrefix and maxExtension bound it.
	prefixWeight = 0.5
	minPrefix    = 4
	maxExtension = 4
)

// posting is one document's weight for a term: its BM25F pseudo term
// frequency, already length-normalised per field.
type posting struct {
	doc int32
	tf  float32
}

// Index is the precomputed search structure of one catalogue; its
// documents are the tools given to [Build]. It is immutable once Build
// returns and safe for concurrent use.
type Index struct {
	tools    []*tool.Tool // the documents, as given to Build (not copied)
	n        int
	terms    map[string]int32 // term → id
	postings [][]posting      // by term id
	idf      []float32        // by term id
	words    map[string]int32 // lowercased word → term id, -1 when dropped
	termStr  []string         // by term id
	syn      map[string][]string
	sorted   []string // the terms, sorted, for prefix matches

	nameTerms   [][]int32 // by doc: distinct terms of the name
	lowerNames  []string  // by doc: lowercased name, for exact-name boosts
	server      []int32   // by doc: server id, -1 for none
	serverTerms [][]int32 // by server id: distinct terms of the server name

	// names and descs make "name description", the text DeerFlow's regex
	// searched (see text); the run index maps each lowercased
	// letter/digit run of the texts to the documents containing it, to
	// pre-filter regex candidates.
	names   []string
	descs   []string
	runIDs  map[string]int32 // run → run id
	runDocs [][]int32        // by run id: documents, ascending
	runList []string         // by run id

	nameBigrams map[uint64][]int32 // consecutive name terms (see bigram) → documents
	nameRepeats bool               // two servers' tools share an MCP name (see repeatsLast)

	forward [][]posting // by doc: its terms (posting.doc is the term id), for RM3 only
	docVec  []float32   // by doc: its unit word vector (buildDocVectors), nil when weight.dense is 0
	termVec []int32     // by term: its row in the word-vector table, -1 for none (buildDocVectors)
	p       *params     // the tuned constants (shippedParams unless BuildWith)

	pool sync.Pool // of *scratch
}

func isASCIIAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// qterm is a query term and its weight: 1 for a term of the query,
// prefixWeight for an index term that shares a long prefix with one.
type qterm struct {
	id     int32
	weight float64
}

// queryTerms returns the query's term groups: for each distinct query
// word (a camelCase word whole where the catalogue has it, see
// wordGroup), its index term at weight 1 and the index terms it also
// matches at lower weight (lexicon synonyms, truncation matches); for
// each Chinese dictionary word its English glosses; and the terms its
// file paths and web addresses imply (appendPathTerms). A document
// scores the best match of each group, so a word's variants never add
// up.
// seq is the index term of each query word that is not a stop word, in
// query order (-1 for a word the catalogue lacks), for phrase matches;
// words are those words once each, for the word-vector score.
func (ix *Index) queryTerms(query string) (out [][]qterm, seq []int32, words []queryStem) {
	splitQueryWords(query, func(w, whole string) {
		st, exact, ok := ix.queryWord(w)
		if !ok {
			return
		}
		g, st, exact := ix.wordGroup(st, exact, whole)
		seq = append(seq, exact)
		if !slices.ContainsFunc(words, func(q queryStem) bool { return q.term == st }) {
			words = append(words, queryStem{st, exact})
		}
		if len(g) == 0 {
			return
		}
		for _, o := range out {
			if o[0].id == g[0].id && o[0].weight == g[0].weight {
				return // the same word again
			}
		}
		out = append(out, g)
	})
	// The English glosses of Chinese words: one group a word, its gloss
	// words alternatives of each other (组合: assemble, combine,
	// combination).
	if ix.p.gloss > 0 {
		eachGloss(query, func(gloss string) {
			var g []qterm
			for w := range strings.FieldsSeq(gloss) {
				if _, id, ok := ix.queryWord(w); ok && id >= 0 && !slices.ContainsFunc(g, func(q qterm) bool { return q.id == id }) {
					g = append(g, qterm{id, ix.p.gloss})
				}
			}
			if len(g) > 0 && !slices.ContainsFunc(out, func(o []qterm) bool { return o[0] == g[0] }) {
				out = append(out, g)
			}
		})
	}
	return ix.appendPathTerms(out, query), seq, words
}

// wordGroup returns the term group of one query word: its index term
// exact (-1 when the catalogue lacks it) at weight 1, its lexicon
// synonyms, derivations and truncation matches at theirs (formsGroup).
// whole is the word a camelCase run was cut from ("github" for the "hub"
// of "GitHub"), or "": when whole, as a word, matches the catalogue, the
// group is whole's, with the part an alternative at camelPartWeight
// ("PowerPoint" is powerpoint and its synonyms, not power and point).
// It returns the group and the stem and index term of the word it is
// the group of: the part's, or whole's.
func (ix *Index) wordGroup(st string, exact int32, whole string) ([]qterm, string, int32) {
	if whole != "" && ix.p.camelPart > 0 {
		if wst, wid, ok := ix.queryWord(whole); ok {
			if g := ix.formsGroup(wst, wid); len(g) > 0 {
				if exact >= 0 && !slices.ContainsFunc(g, func(q qterm) bool { return q.id == exact }) {
					g = append(g, qterm{exact, ix.p.camelPart})
				}
				return g, wst, wid
			}
		}
	}
	return ix.formsGroup(st, exact), st, exact
}

// formsGroup returns the term group of the word of stem st and index
// term exact (-1 for none): exact at weight 1, then its lexicon
// synonyms, derivations and truncation matches at their weights, each
// term once at its highest weight.
func (ix *Index) formsGroup(st string, exact int32) []qterm {
	var g []qterm
	add := func(id int32, w float64) {
		for i := range g {
			if g[i].id == id {
				g[i].weight = max(g[i].weight, w)
				return
			}
		}
		g = append(g, qterm{id, w})
	}
	if exact >= 0 {
		add(exact, 1)
	}
	for _, s := range ix.syn[st] {
		if ix.p.synonym == 0 {
			break
		}
		if id, ok := ix.terms[s]; ok {
			add(id, ix.p.synonym)
		}
	}
	if ix.p.derivation > 0 {
		eachDerivation(st, func(s string) {
			if id, ok := ix.terms[s]; ok {
				add(id, ix.p.derivation)
			}
		})
	}
	if ix.p.prefix > 0 && len(st) >= int(ix.p.minPrefix) && isLetters(st) {
		ix.prefixMatches(st, func(id int32) { add(id, ix.p.prefix) })
	}
	return g
}

// queryStem is a distinct word of a query: its index term and the
// term's id (-1 when the catalogue lacks it).
type queryStem struct {
	term string
	id   int32
}

// queryWord returns the index term of a lowercased query word and its
// id (-1 when the catalogue lacks it); ok is false for a word that
// carries no signal (a stop word, a single character).
func (ix *Index) queryWord(w string) (term string, id int32, ok bool) {
	if len(w) < 2 || stopWord(w) {
		return "", -1, false
	}
	if id, ok := ix.words[w]; ok {
		if id < 0 {
			return "", -1, false
		}
		return ix.termStr[id], id, true
	}
	term = stemWord(w)
	id = -1
	if tid, ok := ix.terms[term]; ok {
		id = tid
	}
	return term, id, true
}

// prefixMatches calls fn with the index terms, other than q itself, that
// start with q and are at most maxExtension letters longer, and those
// that q starts with and that are at least minPrefix letters long.
func (ix *Index) prefixMatches(q string, fn func(id int32)) {
	i, _ := slices.BinarySearch(ix.sorted, q)
	minPrefix, maxExtension := int(ix.p.minPrefix), int(ix.p.maxExt)
	for n := 0; i < len(ix.sorted) && strings.HasPrefix(ix.sorted[i], q) && n < 8; i++ {
		if t := ix.sorted[i]; t != q && len(t)-len(q) <= maxExtension {
			fn(ix.terms[t])
			n++
		}
	}
	for l := len(q) - 1; l >= minPrefix && len(q)-l <= maxExtension; l-- {
		if id, ok := ix.terms[q[:l]]; ok {
			fn(id)
		}
	}
}

// scored is a document and its score.
type scored struct {
	doc   int32
	score float64
}

// ranking is one query's scoring state.
type ranking struct {
	ix         *Index
	query      string
	lowerQuery string
	terms      []qterm
	exact      []bool // by term id: a term of the query itself (weight 1)
	qw         []float64
	base       []float64 // BM25F score by document
	touched    []int32   // documents with a positive base score
	serverHit  []int8    // by server id: 0 unknown, 1 no, 2 the query names the server
	sc         *scratch
}

// newRanking computes the BM25F base scores of query.
func (ix *Index) newRanking(query string) *ranking {
	groups, seq, words := ix.queryTerms(query)
	if ix.p.rm3.on() && len(groups) > 0 {
		first := ix.rankGroups(query, groups, seq)
		groups = append(groups, ix.feedback(first, groups)...)
		first.release()
	}
	r := ix.rankGroups(query, groups, seq)
	if ix.p.dense > 0 && r.sc != nil {
		ix.addDense(r, words)
	}
	return r
}

// rankGroups computes the BM25F base scores of the query term groups.
func (ix *Index) rankGroups(query string, groups [][]qterm, seq []int32) *ranking {
	r := &ranking{ix: ix, query: query}
	if len(groups) == 0 {
		return r
	}
	sc := ix.getScratch()
	r.sc = sc
	r.exact, r.qw, r.base, r.touched = sc.exact, sc.qw, sc.base, sc.touched[:0]
	for _, g := range groups {
		for _, q := range g {
			if q.weight == 1 {
				r.exact[q.id] = true
			}
			r.qw[q.id] = max(r.qw[q.id], q.weight)
			r.terms = append(r.terms, q)
		}
	}
	best, bestDocs := sc.best, sc.bestDocs[:0]
	k1 := ix.p.k1
	for _, g := range groups {
		if len(g) == 1 {
			for _, q := range g {
				idf := q.weight * float64(ix.idf[q.id])
				for _, p := range ix.postings[q.id] {
					if r.base[p.doc] == 0 {
						r.touched = append(r.touched, p.doc)
					}
					tf := float64(p.tf)
					r.base[p.doc] += idf * tf * (k1 + 1) / (tf + k1)
				}
			}
			continue
		}
		bestDocs = bestDocs[:0]
		for _, q := range g {
			idf := q.weight * float64(ix.idf[q.id])
			for _, p := range ix.postings[q.id] {
				tf := float64(p.tf)
				v := idf * tf * (k1 + 1) / (tf + k1)
				if best[p.doc] == 0 {
					bestDocs = append(bestDocs, p.doc)
				}
				best[p.doc] = max(best[p.doc], v)
			}
		}
		for _, d := range bestDocs {
			if r.base[d] == 0 {
				r.touched = append(r.touched, d)
			}
			r.base[d] += best[d]
			best[d] = 0
		}
	}
	sc.bestDocs = bestDocs

	// Phrase matches: two consecutive query words that are consecutive
	// terms of a tool's name (bar chart → generate_bar_chart).
	for i := 1; i < len(seq); i++ {
		a, b := seq[i-1], seq[i]
		if a < 0 || b < 0 || a == b {
			continue
		}
		bonus := ix.p.bigram * float64(ix.idf[a]+ix.idf[b]) / 2
		for _, d := range ix.nameBigrams[bigram(a, b)] {
			if r.base[d] == 0 {
				r.touched = append(r.touched, d)
			}
			r.base[d] += bonus
		}
	}
	return r
}

// scratch is the per-query working memory of a ranking, reused through
// the index's pool: arrays by document and by term that are all zero
// between uses.
type scratch struct {
	base, best []float64 // by document
	qw         []float64 // by term
	exact      []bool    // by term
	touched    []int32
	bestDocs   []int32
	dense      []float32 // the query's vector and a word's (addDense)
	cutVals    []float64 // base scores to select candidates from (top, addDense)
}

func (ix *Index) getScratch() *scratch {
	if sc, ok := ix.pool.Get().(*scratch); ok {
		return sc
	}
	nt := len(ix.termStr)
	return &scratch{
		base: make([]float64, ix.n), best: make([]float64, ix.n),
		qw: make([]float64, nt), exact: make([]bool, nt),
	}
}

// release zeroes what the ranking wrote and returns its scratch to the
// pool; the ranking must not be used afterwards.
func (r *ranking) release() {
	sc := r.sc
	if sc == nil {
		return
	}
	for _, d := range r.touched {
		sc.base[d] = 0
	}
	for _, q := range r.terms {
		sc.qw[q.id], sc.exact[q.id] = 0, false
	}
	sc.touched = r.touched[:0]
	r.sc, r.base, r.exact, r.qw = nil, nil, nil, nil
	r.ix.pool.Put(sc)
}

// score returns document d's final score: its base score times the name
// coverage, exact-name and server boosts.
func (r *ranking) score(d int32) float64 {
	if r.base == nil {
		return 0
	}
	ix := r.ix
	s := r.base[d]
	if s == 0 {
		return 0
	}
	if names := ix.nameTerms[d]; len(names) > 0 {
		hit := 0
		cov := 0.0
		for _, term := range names {
			if r.exact[term] {
				hit++
			}
			cov += r.qw[term]
		}
		s *= 1 + ix.p.nameCoverage*cov/float64(len(names))
		if hit == len(names) && len(ix.lowerNames[d]) >= 4 {
			if r.lowerQuery == "" {
				r.lowerQuery = lowerASCII(r.query)
			}
			if containsWord(r.lowerQuery, ix.lowerNames[d]) {
				s *= 1 + ix.p.exactName
			}
		}
	}
	if r.namesServer(d) {
		s *= 1 + ix.p.server
	}
	return s
}

// namesServer reports whether the query holds every term of document d's
// server name (false for a tool without a server).
func (r *ranking) namesServer(d int32) bool {
	ix := r.ix
	sid := ix.server[d]
	if sid < 0 || r.exact == nil {
		return false
	}
	if r.serverHit == nil {
		r.serverHit = make([]int8, len(ix.serverTerms))
	}
	if r.serverHit[sid] == 0 {
		hit := len(ix.serverTerms[sid]) > 0
		for _, term := range ix.serverTerms[sid] {
			hit = hit && r.exact[term]
		}
		r.serverHit[sid] = 1
		if hit {
			r.serverHit[sid] = 2
		}
	}
	return r.serverHit[sid] == 2
}

// top returns the documents with a positive score, best first, ties in
// catalogue order, at most limit of them (limit ≤ 0: all). Only documents
// whose base score, boosted as much as possible, could reach the limit-th
// best base score are boosted and compared.
func (r *ranking) top(limit int) []scored {
	cands := r.touched
	if limit > 0 && len(cands) > limit {
		vals := r.sc.cutVals[:0]
		for _, d := range cands {
			vals = append(vals, r.base[d])
		}
		floor := kthLargest(vals, limit) / r.ix.p.maxBoost
		r.sc.cutVals = vals
		cands = make([]int32, 0, 4*limit)
		for _, d := range r.touched {
			if r.base[d] >= floor {
				cands = append(cands, d)
			}
		}
	}
	return topK(cands, r.score, limit)
}

// containsWord reports whether name occurs in s not glued to other
// letters or digits.
func containsWord(s, name string) bool {
	for off := 0; ; {
		i := indexFrom(s, name, off)
		if i < 0 {
			return false
		}
		end := i + len(name)
		if (i == 0 || !isASCIIAlnum(s[i-1])) && (end == len(s) || !isASCIIAlnum(s[end])) {
			return true
		}
		off = i + 1
	}
}

func indexFrom(s, sub string, off int) int {
	if off > len(s) {
		return -1
	}
	if i := strings.Index(s[off:], sub); i >= 0 {
		return off + i
	}
	return -1
}

// topK returns the documents with a positive score, best first and ties
// in document order, at most limit of them (limit ≤ 0: all).
func topK(docs []int32, score func(int32) float64, limit int) []scored {
	var out []scored
	if limit <= 0 {
		for _, d := range docs {
			if s := score(d); s > 0 {
				out = append(out, scored{d, s})
			}
		}
		slices.SortFunc(out, func(a, b scored) int {
			if better(a, b) {
				return -1
			}
			if better(b, a) {
				return 1
			}
			return 0
		})
		return out
	}
	for _, d := range docs {
		s := score(d)
		if s <= 0 {
			continue
		}
		if limit > 0 && len(out) == limit && !better(scored{d, s}, out[limit-1]) {
			continue
		}
		i := len(out)
		if limit <= 0 || len(out) < limit {
			out = append(out, scored{})
		} else {
			i = limit - 1
		}
		for i > 0 && better(scored{d, s}, out[i-1]) {
			out[i] = out[i-1]
			i--
		}
		out[i] = scored{d, s}
	}
	return out
}

func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc < b.doc
}

// bigram is the key of the term pair a, b.
func bigram(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }
