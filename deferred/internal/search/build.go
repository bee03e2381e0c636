package search

import (
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/tool"
)

// runDocsOf returns the documents holding the lowercased letter/digit run
// r, ascending.
func (ix *Index) runDocsOf(r string) []int32 {
	if id, ok := ix.runIDs[r]; ok {
		return ix.runDocs[id]
	}
	return nil
}

// analyzer turns the texts of a catalogue into term ids. Each distinct
// letter/digit run, as written, is analysed once (see rawRun); each
// distinct lowercased word is interned once (stop-word test, stemming and
// the term lookup happen on its first occurrence only). It also records
// the lowercased ASCII letter/digit runs of names and descriptions for
// the regex pre-filter.
type analyzer struct {
	ix      *Index
	lb      []byte     // lowercased run being analysed
	raw     runTable   // by run as written
	runData []int32    // run ids and term ids of the raw runs (see rawRun)
	runLast []int32    // by run id: the last document recorded
	occ     [][]runOcc // (run, document) pairs, documents ascending, in chunks
}

// rawRun is what a letter/digit run, as written, analyses to: the ids of
// its lowercased ASCII letter/digit runs, runData[runs:start] (the run
// itself when it is ASCII), and its term ids, runData[start:end].
type rawRun struct {
	runs, start, end int32
}

// runOcc records that document doc holds run id run.
type runOcc struct{ run, doc int32 }

func (a *analyzer) termID(term string) int32 {
	ix := a.ix
	if id, ok := ix.terms[term]; ok {
		return id
	}
	id := int32(len(ix.termStr))
	ix.terms[term] = id
	ix.termStr = append(ix.termStr, term)
	return id
}

// word returns the term id of a lowercased word, -1 when it is dropped.
func word[T text](a *analyzer, w T) int32 {
	if id, ok := a.ix.words[string(w)]; ok { // no allocation
		return id
	}
	s := string(w)
	id := int32(-1)
	if len(s) >= 2 && !stopWord(s) {
		id = a.termID(stemWord(s))
	}
	a.ix.words[s] = id
	return id
}

func (a *analyzer) runID(r []byte) int32 {
	ix := a.ix
	id, ok := ix.runIDs[string(r)]
	if !ok {
		id = int32(len(ix.runList))
		s := string(r)
		ix.runIDs[s] = id
		ix.runList = append(ix.runList, s)
		a.runLast = append(a.runLast, -1)
	}
	return id
}

// text is what the analyzer reads: descriptions are strings, parameter
// names and descriptions are read in place in the schema's bytes.
type text interface{ string | []byte }

// terms appends the term ids of s to dst; when doc ≥ 0 it also records
// the ASCII letter/digit runs of s for doc (documents come in ascending
// order). It splits words exactly as [splitWords] does.
func (a *analyzer) terms(dst []int32, s string, doc int32) []int32 {
	return analyse(a, dst, s, doc)
}

func analyse[T text](a *analyzer, dst []int32, s T, doc int32) []int32 {
	for i := 0; ; {
		start, end := nextRun(s, i)
		if start == len(s) {
			return dst
		}
		i = end
		run := s[start:end]
		prefix, h := hashRunAt(s, start, end)
		ri, ok := get(&a.raw, run, prefix, h)
		if !ok {
			if isASCIIText(run) {
				ri = analyseASCIIRun(a, run)
			} else {
				ri = a.analyseRun(string(run))
			}
			put(&a.raw, run, prefix, h, ri)
		}
		dst = a.use(dst, ri, doc)
	}
}

// use appends the term ids of an analysed run to dst and, when doc ≥ 0,
// records its regex-index runs for doc (once per document).
func (a *analyzer) use(dst []int32, ri rawRun, doc int32) []int32 {
	if doc >= 0 {
		for _, id := range a.runData[ri.runs:ri.start] {
			if a.runLast[id] != doc {
				a.runLast[id] = doc
				a.record(runOcc{run: id, doc: doc})
			}
		}
	}
	return append(dst, a.runData[ri.start:ri.end]...)
}

// nextRun returns the bounds of the first letter/digit run of s at or
// after i; start is len(s) when there is none.
func nextRun[T text](s T, i int) (start, end int) {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiAlnum[c] {
				break
			}
			i++
			continue
		}
		r, size := decodeRune(s[i:])
		if isWordRune(r) {
			break
		}
		i += size
	}
	start = i
	// Eight ASCII bytes at a time while they are all letters and digits.
	for i+8 <= len(s) {
		m := alnumMask(load64(s, i))
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) / 8
		if s[i] < utf8.RuneSelf {
			return start, i
		}
		break
	}
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !asciiAlnum[c] {
				break
			}
			i++
			continue
		}
		r, size := decodeRune(s[i:])
		if !isWordRune(r) {
			break
		}
		i += size
	}
	return start, i
}

// alnumMask returns 0x80 in each byte of x that is not an ASCII letter
// or digit (any byte ≥ 0x80 included), 0 in the others.
func alnumMask(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// For a byte b < 0x80, b + 0x80 - lo has its high bit set iff b ≥ lo,
	// and b + 0x7f - hi iff b > hi; no sum carries into the next byte.
	in := func(x uint64, lo, hi uint64) uint64 {
		return (x + (0x80-lo)*ones) &^ (x + (0x7f-hi)*ones)
	}
	low := x &^ highs
	alnum := in(low, '0', '9') | in(low|0x20*ones, 'a', 'z')
	return (^alnum | x) & highs
}

func isASCIIText[T text](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func decodeRune[T text](s T) (rune, int) {
	switch s := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(s)
	case []byte:
		return utf8.DecodeRune(s)
	}
	panic("unreachable")
}

// hashRun returns a run's first eight bytes packed into a word (its
// whole text when it is no longer: letters and digits are never zero
// bytes) and a hash of its length and its first and last eight bytes.
// The byte loads are independent of each other, so it costs a few cycles
// whatever the run's length, and the few thousand distinct runs of a
// catalogue spread well (a collision only costs a comparison).
func hashRun[T text](s T) (prefix uint64, h uint32) {
	for j := range min(len(s), 8) {
		prefix |= uint64(s[j]) << (8 * j)
	}
	var x uint64
	if len(s) > 8 {
		t := s[max(len(s)-8, 8):]
		for j := range len(t) {
			x |= uint64(t[j]) << (8 * j)
		}
	}
	m := (prefix^uint64(len(s))<<58)*0x9E3779B97F4A7C15 ^ x*0xC2B2AE3D27D4EB4F
	return prefix, uint32(m>>32) ^ uint32(m)
}

// hashRunAt is hashRun(s[start:end]). It loads whole words from s, so
// it costs the same whatever the run's length.
func hashRunAt[T text](s T, start, end int) (prefix uint64, h uint32) {
	n := end - start
	if start+8 > len(s) {
		return hashRun(s[start:end])
	}
	prefix = load64(s, start)
	if n < 8 {
		prefix &= 1<<(8*n) - 1
	}
	var x uint64
	if n > 8 {
		// The last eight bytes, or those after the first eight.
		x = load64(s, end-8) >> (8 * max(16-n, 0))
	}
	m := (prefix^uint64(n)<<58)*0x9E3779B97F4A7C15 ^ x*0xC2B2AE3D27D4EB4F
	return prefix, uint32(m>>32) ^ uint32(m)
}

// load64 returns s[i:i+8] as a little-endian word.
func load64[T text](s T, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// analyseASCIIRun analyses a run of ASCII letters and digits.
func analyseASCIIRun[T text](a *analyzer, raw T) rawRun {
	a.lb = a.lb[:0]
	for j := 0; j < len(raw); j++ {
		c := raw[j]
		if isUpperASCII(c) {
			c += 'a' - 'A'
		}
		a.lb = append(a.lb, c)
	}
	ri := rawRun{runs: int32(len(a.runData))}
	a.runData = append(a.runData, a.runID(a.lb))
	ri.start = int32(len(a.runData))
	// Identifier boundaries: fooBar → foo|Bar, HTMLParser → HTML|Parser.
	ws := 0
	for j := 1; j < len(raw); j++ {
		c, p := raw[j], raw[j-1]
		split := -1
		if isUpperASCII(c) && isLowerASCII(p) {
			split = j
		} else if isLowerASCII(c) && isUpperASCII(p) && j >= 2 && isUpperASCII(raw[j-2]) {
			split = j - 1
		}
		if split > ws {
			if id := word(a, a.lb[ws:split]); id >= 0 {
				a.runData = append(a.runData, id)
			}
			ws = split
		}
	}
	if id := word(a, a.lb[ws:]); id >= 0 {
		a.runData = append(a.runData, id)
	}
	ri.end = int32(len(a.runData))
	return ri
}

// analyseRun analyses a run of letters and digits, some of them not
// ASCII: its words come from [splitWords] and, for Chinese text, the
// English words of its glosses ([eachGloss]); its ASCII letter/digit
// runs (the parts between non-ASCII characters) are recorded for the
// regex pre-filter.
func (a *analyzer) analyseRun(raw string) rawRun {
	ri := rawRun{runs: int32(len(a.runData))}
	start := -1
	for i := 0; i <= len(raw); i++ {
		alnum := i < len(raw) && isASCIIAlnum(raw[i])
		if alnum && start < 0 {
			start = i
		}
		if !alnum && start >= 0 {
			a.lb = append(a.lb[:0], raw[start:i]...)
			for j, c := range a.lb {
				if isUpperASCII(c) {
					a.lb[j] = c + 'a' - 'A'
				}
			}
			a.runData = append(a.runData, a.runID(a.lb))
			start = -1
		}
	}
	ri.start = int32(len(a.runData))
	emit := func(w string) {
		if id := word(a, w); id >= 0 {
			a.runData = append(a.runData, id)
		}
	}
	splitWords(raw, emit)
	eachGlossWord(raw, emit) // Chinese text: its English glosses too
	ri.end = int32(len(a.runData))
	return ri
}

// record appends o to the run occurrences. They grow in chunks, not one
// array, so growing never copies them.
func (a *analyzer) record(o runOcc) {
	const chunk = 1 << 14
	if len(a.occ) == 0 || len(a.occ[len(a.occ)-1]) == chunk {
		a.occ = append(a.occ, make([]runOcc, 0, chunk))
	}
	last := &a.occ[len(a.occ)-1]
	*last = append(*last, o)
}

// runDocs lays out the recorded run occurrences by run id (CSR).
func (a *analyzer) runDocs() [][]int32 {
	nr := len(a.ix.runList)
	count := make([]int32, nr+1)
	for _, c := range a.occ {
		for _, o := range c {
			count[o.run+1]++
		}
	}
	for i := range nr {
		count[i+1] += count[i]
	}
	docs := make([]int32, count[nr])
	out := make([][]int32, nr)
	for r := range nr {
		out[r] = docs[count[r]:count[r]:count[r+1]]
	}
	for _, c := range a.occ { // documents ascending
		for _, o := range c {
			out[o.run] = append(out[o.run], o.doc)
		}
	}
	return out
}

func isUpperASCII(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLowerASCII(c byte) bool { return 'a' <= c && c <= 'z' }

// buildIndexSplit is [Build] with the analyser taking tools[:m] and the
// second goroutine reading tools[m:] (see rawPart). The analyser
// collects the terms of every document's fields ([fieldBuild]); then a
// third goroutine lays out the regex run index, the name pairs and the
// sorted terms while the analyser lays out the postings. Last, the
// finished index answers a warm-up query (see warmQuery).
func buildIndexSplit(tools []*tool.Tool, m int, beside func()) *Index {
	p := shippedParams()
	return buildIndexSplitWith(tools, m, beside, &p)
}

// buildIndexSplitWith is buildIndexSplit with the tuned constants p.
func buildIndexSplitWith(tools []*tool.Tool, m int, beside func(), p *params) *Index {
	ix := newIndex(tools)
	ix.p = p
	a := &analyzer{ix: ix}
	a.raw.init(1 << 14)
	servers := make(map[string]int32)

	// The analyser takes tools[:m]; the second goroutine reads tools[m:]
	// into part, then runs beside while the analyser replays the part and
	// lays out the postings.
	part := &rawPart{}
	done, besideDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(besideDone)
		if m < len(tools) {
			part.read(tools[m:])
		}
		close(done)
		loadSearchTables()
		if beside != nil {
			beside()
		}
	}()
	ix.syn = synonyms()
	if p.customSyn {
		ix.syn = p.syn
	}

	b := fieldBuild{ix: ix, a: a, m: m, part: part, done: done}
	b.reserve(tools)
	b.documents(tools, servers)

	<-done
	// The analysis is over: the regex run index, the name pairs and the
	// sorted terms are laid out beside the postings. The goroutine takes
	// a copy of b.bigrams rather than b, which would then leave the stack.
	tail := make(chan struct{})
	bigrams := b.bigrams
	go func() {
		defer close(tail)
		ix.runDocs = a.runDocs()
		ix.nameBigrams = nameBigramIndex(bigrams, ix.n)
		ix.sorted = slices.Clone(ix.termStr)
		slices.Sort(ix.sorted)
		ix.nameRepeats = repeatedMCPNames(ix.tools, ix.server)
	}()
	b.postings(b.compoundParts())
	if p.rm3.on() {
		ix.forward = forwardIndex(ix.postings, ix.n)
	}
	<-tail
	if p.dense > 0 {
		ix.buildDocVectors()
	}
	<-besideDone
	ix.warmUp() // the tables are loaded: besideDone is after loadSearchTables
	return ix
}

// newIndex returns the index of tools before analysis: its tables and
// per-document arrays made, sized for a catalogue of tools.
func newIndex(tools []*tool.Tool) *Index {
	n := len(tools)
	return &Index{
		tools:      tools,
		n:          n,
		terms:      make(map[string]int32, 4096),
		words:      make(map[string]int32, 4096),
		nameTerms:  make([][]int32, n),
		lowerNames: make([]string, n),
		server:     make([]int32, n),
		descs:      make([]string, n),
		names:      make([]string, n),
		runIDs:     make(map[string]int32, 4096),
	}
}

// nameBigram records that document doc's name holds the term pair key
// (see bigram).
type nameBigram struct {
	key uint64
	doc int32
}

// nameBigramIndex maps each term pair of pairs to its documents,
// ascending; pairs are in document order.
func nameBigramIndex(pairs []nameBigram, n int) map[uint64][]int32 {
	out := make(map[uint64][]int32, n)
	for _, p := range pairs {
		if ps := out[p.key]; len(ps) == 0 || ps[len(ps)-1] != p.doc {
			out[p.key] = append(ps, p.doc)
		}
	}
	return out
}

// text returns "name description" of document d, what DeerFlow's regex
// searched.
func (ix *Index) text(d int32) string { return ix.names[d] + " " + ix.descs[d] }

// asciiAlnum is isASCIIAlnum as a table.
var asciiAlnum = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = isASCIIAlnum(byte(c))
	}
	return t
}()

// runTable maps the letter/digit runs of the catalogue, as written, to
// their analysis. It is an open-addressing table: a slot holds an entry's
// hash and index, so a probe reads one word; a run of up to eight bytes
// (most words) is compared as one packed word, and longer keys are
// copied into one arena, so comparing a hit reads memory that stays in
// cache rather than the run's first occurrence in the catalogue.
type runTable struct {
	slots   []uint64 // hash<<32 | entry index+1, 0 when empty; len is a power of two
	entries []runEntry
	arena   []byte // the keys longer than eight bytes, back to back
}

type runEntry struct {
	prefix uint64 // see hashRun
	n      int32  // key length
	end    int32  // end of the key in arena, for keys longer than eight bytes
	val    rawRun
}

func (t *runTable) init(n int) {
	t.slots = make([]uint64, n)
	t.entries = make([]runEntry, 0, n/2)
}

func get[T text](t *runTable, s T, prefix uint64, h uint32) (rawRun, bool) {
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		slot := t.slots[i]
		if slot == 0 {
			return rawRun{}, false
		}
		if uint32(slot>>32) != h {
			continue
		}
		e := &t.entries[uint32(slot)-1]
		if e.prefix == prefix && int(e.n) == len(s) && (len(s) <= 8 || string(t.arena[int(e.end)-len(s)+8:e.end]) == string(s[8:])) {
			return e.val, true
		}
	}
}

// put adds s, which get did not find.
func put[T text](t *runTable, s T, prefix uint64, h uint32, v rawRun) {
	if 2*(len(t.entries)+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]uint64, 2*len(old))
		for _, slot := range old {
			if slot != 0 {
				t.insert(slot)
			}
		}
	}
	e := runEntry{prefix: prefix, n: int32(len(s)), val: v}
	if len(s) > 8 {
		t.arena = append(t.arena, s[8:]...)
		e.end = int32(len(t.arena))
	}
	t.entries = append(t.entries, e)
	t.insert(uint64(h)<<32 | uint64(len(t.entries)))
}

func (t *runTable) insert(slot uint64) {
	mask := uint32(len(t.slots) - 1)
	i := uint32(slot>>32) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = slot
}

// leadEnd returns where the lead sentence of a description ends: at the
// first ". " or newline within the first 200 bytes, else at the last
// space or ASCII punctuation before byte 200, else at the end. The cut is
// always between words, so the lead's terms are a prefix of the
// description's.
func leadEnd(s string) int {
	const maxLead = 200
	lim := min(len(s), maxLead)
	end := -1
	if i := strings.Index(s[:lim], ". "); i >= 0 {
		end = i
	}
	if i := strings.IndexByte(s[:lim], '\n'); i >= 0 && (end < 0 || i < end) {
		end = i
	}
	if end >= 0 || len(s) <= maxLead {
		if end < 0 {
			end = len(s)
		}
		return end
	}
	for i := lim; i > 0; i-- {
		if c := s[i-1]; c < utf8.RuneSelf && !asciiAlnum[c] {
			return i - 1
		}
	}
	return len(s)
}
