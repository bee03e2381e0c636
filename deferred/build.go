package deferred

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/tool"
)

// runDocsOf returns the documents holding the lowercased letter/digit run
// r, ascending.
func (ix *index) runDocsOf(r string) []int32 {
	if id, ok := ix.runIDs[r]; ok {
		return ix.runDocs[id]
	}
	return nil
}

// analyzer turns the texts of a catalogue into term ids. It interns each
// distinct lowercased word once (stop-word test, stemming and the term
// lookup happen on the first occurrence only) and records the
// letter/digit runs of names and descriptions for the regex pre-filter.
type analyzer struct {
	ix       *index
	lb       []byte   // lowercased run being analysed
	raw      runTable // by run as written
	runTerms []int32
	runLast  []int32 // by run id: the last document recorded
}

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
func (a *analyzer) word(w []byte) int32 {
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
		ix.runDocs = append(ix.runDocs, nil)
		a.runLast = append(a.runLast, -1)
	}
	return id
}

func (a *analyzer) run(r []byte, doc int32) {
	a.addRun(a.runID(r), doc)
}

// addRun records that doc holds run id; documents come in ascending order.
func (a *analyzer) addRun(id, doc int32) {
	if a.runLast[id] != doc {
		a.runLast[id] = doc
		a.ix.runDocs[id] = append(a.ix.runDocs[id], doc)
	}
}

// terms appends the term ids of s to dst; when doc ≥ 0 it also records
// the letter/digit runs of s for doc. It splits words exactly as
// [splitWords] does, with a fast path for ASCII text.
func (a *analyzer) terms(dst []int32, s string, doc int32) []int32 {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && !asciiAlnum[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			if r, size := utf8.DecodeRuneInString(s[i:]); !isWordRune(r) {
				i += size
				continue
			}
		}
		// A run of letters and digits; non-ASCII ones take the slow path.
		start, ascii := i, true
		h := uint32(fnvOffset)
		for i < len(s) {
			c := s[i]
			if c < utf8.RuneSelf {
				if !asciiAlnum[c] {
					break
				}
				h = (h ^ uint32(c)) * fnvPrime
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if !isWordRune(r) {
				break
			}
			ascii = false
			i += size
		}
		if !ascii {
			splitWords(s[start:i], func(w string) {
				if id := a.word([]byte(w)); id >= 0 {
					dst = append(dst, id)
				}
			})
			if doc >= 0 {
				a.runs(s[start:i], doc)
			}
			continue
		}
		ri, ok := a.raw.get(s[start:i], h)
		if !ok {
			ri = a.analyseRun(s[start:i])
			a.raw.put(s[start:i], h, ri)
		}
		if doc >= 0 && a.runLast[ri.run] != doc {
			a.runLast[ri.run] = doc
			a.ix.runDocs[ri.run] = append(a.ix.runDocs[ri.run], doc)
		}
		dst = append(dst, a.runTerms[ri.start:ri.end]...)
	}
	return dst
}

// rawRun is what an ASCII letter/digit run, as written, analyses to: its
// lowercased run id and its term ids (runTerms[start:end]).
type rawRun struct {
	run        int32
	start, end int32
}

func (a *analyzer) analyseRun(raw string) rawRun {
	a.lb = a.lb[:0]
	for j := 0; j < len(raw); j++ {
		c := raw[j]
		if isUpperASCII(c) {
			c += 'a' - 'A'
		}
		a.lb = append(a.lb, c)
	}
	ri := rawRun{run: a.runID(a.lb), start: int32(len(a.runTerms))}
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
			if id := a.word(a.lb[ws:split]); id >= 0 {
				a.runTerms = append(a.runTerms, id)
			}
			ws = split
		}
	}
	if id := a.word(a.lb[ws:]); id >= 0 {
		a.runTerms = append(a.runTerms, id)
	}
	ri.end = int32(len(a.runTerms))
	return ri
}

// runs records the ASCII letter/digit runs of s, lowercased, for doc.
func (a *analyzer) runs(s string, doc int32) {
	start := -1
	for i := 0; i <= len(s); i++ {
		alnum := i < len(s) && isASCIIAlnum(s[i])
		if alnum && start < 0 {
			start = i
		}
		if !alnum && start >= 0 {
			a.lb = append(a.lb[:0], lowerASCII(s[start:i])...)
			a.run(a.lb, doc)
			start = -1
		}
	}
}

func isUpperASCII(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLowerASCII(c byte) bool { return 'a' <= c && c <= 'z' }

func buildIndex(tools []*tool.Tool) *index {
	n := len(tools)
	ix := &index{
		n:           n,
		terms:       make(map[string]int32, 4096),
		words:       make(map[string]int32, 4096),
		nameTerms:   make([][]int32, n),
		lowerNames:  make([]string, n),
		server:      make([]int32, n),
		descs:       make([]string, n),
		names:       make([]string, n),
		runIDs:      make(map[string]int32, 4096),
		nameBigrams: make(map[uint64][]int32, n),
	}
	a := &analyzer{ix: ix}
	a.raw.init(1 << 14)
	servers := make(map[string]int32)

	// The term ids of every document, field after field, in one array:
	// document d's field k is flat[off[d*numFields+k]:off[d*numFields+k+1]].
	size := 0
	for _, t := range tools {
		size += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	flat := make([]int32, 0, size/10+8*n) // about one term per ten bytes
	off := make([]int32, 1, n*numFields+1)
	var totalLen [numFields]float64
	end := func(k int) {
		off = append(off, int32(len(flat)))
		totalLen[k] += float64(off[len(off)-1] - off[len(off)-2])
	}

	names := make([]int32, 0, 8*n)
	var pdBuf []int32
	var nameTerm, proseTerm []bool // by term id
	mark := func(set *[]bool, ids []int32) {
		for _, id := range ids {
			for int(id) >= len(*set) {
				*set = append(*set, false)
			}
			(*set)[id] = true
		}
	}
	for d, t := range tools {
		doc := int32(d)
		flat = a.terms(flat, t.Name, doc)
		end(fieldName)
		nt := flat[off[len(off)-2]:]
		for i := 1; i < len(nt); i++ {
			if nt[i-1] == nt[i] {
				continue
			}
			key := bigram(nt[i-1], nt[i])
			if ps := ix.nameBigrams[key]; len(ps) == 0 || ps[len(ps)-1] != doc {
				ix.nameBigrams[key] = append(ps, doc)
			}
		}
		nameStart := len(names)
		for _, id := range flat[off[len(off)-2]:] {
			if !slices.Contains(names[nameStart:], id) {
				names = append(names, id)
			}
		}
		ix.nameTerms[d] = names[nameStart:len(names):len(names)]
		mark(&nameTerm, names[nameStart:])
		ix.lowerNames[d] = lowerASCII(t.Name)
		ix.names[d] = t.Name

		ix.server[d] = -1
		if srv := t.Meta["mcp_server"]; srv != "" {
			sid, ok := servers[srv]
			if !ok {
				sid = int32(len(ix.serverTerms))
				servers[srv] = sid
				var ids []int32
				for _, id := range a.terms(nil, srv, -1) {
					if !slices.Contains(ids, id) {
						ids = append(ids, id)
					}
				}
				ix.serverTerms = append(ix.serverTerms, ids)
			}
			ix.server[d] = sid
			flat = append(flat, ix.serverTerms[sid]...)
		}
		end(fieldServer)

		// The lead sentence is analysed first so that its terms, a prefix
		// of the description's, can be copied into the lead field.
		lead := leadEnd(t.Description)
		descStart := len(flat)
		flat = a.terms(flat, t.Description[:lead], doc)
		leadTerms := len(flat) - descStart
		flat = a.terms(flat, t.Description[lead:], doc)
		mark(&proseTerm, flat[off[len(off)-1]:])
		end(fieldDescription)

		pd := pdBuf[:0]
		forEachParam(t.InputSchema, func(name, desc string) {
			flat = a.terms(flat, name, -1)
			if desc != "" {
				pd = a.terms(pd, desc, -1)
			}
		})
		end(fieldParamName)
		flat = append(flat, pd...)
		pdBuf = pd
		end(fieldParamDescription)
		flat = append(flat, flat[descStart:descStart+leadTerms]...)
		end(fieldLead)

		ix.descs[d] = t.Description
	}

	// Compound identifiers of names and server names (datagov,
	// hdbcarpark) also count their parts, when they occur nowhere in
	// prose (so "generate" is never read as "gene rate").
	nt := len(ix.termStr)
	compound := make([][]int32, nt) // by term id
	for w, id := range ix.words {
		if id >= 0 && int(id) < len(nameTerm) && nameTerm[id] && (int(id) >= len(proseTerm) || !proseTerm[id]) {
			compound[id] = ix.splitCompound(w)
		}
	}
	// terms calls fn with the terms of document d's field k, compound
	// parts included, and returns their number.
	terms := func(d, k int, fn func(id int32)) int {
		a, b := off[d*numFields+k], off[d*numFields+k+1]
		count := int(b - a)
		for _, id := range flat[a:b] {
			fn(id)
			if k == fieldName || k == fieldServer {
				for _, p := range compound[id] {
					fn(p)
				}
				count += len(compound[id])
			}
		}
		return count
	}
	lens := make([]int32, n*numFields)
	for d := range n {
		for k := range numFields {
			c := terms(d, k, func(int32) {})
			lens[d*numFields+k] = int32(c)
			totalLen[k] += float64(c - int(off[d*numFields+k+1]-off[d*numFields+k]))
		}
	}

	var avg [numFields]float64
	for k := range numFields {
		avg[k] = max(totalLen[k]/float64(max(n, 1)), 1)
	}

	// Document frequencies, then postings in one array (CSR).
	last := make([]int32, nt)
	for i := range last {
		last[i] = -1
	}
	df := make([]int32, nt+1)
	for d := range n {
		for k := range numFields {
			terms(d, k, func(id int32) {
				if last[id] != int32(d) {
					last[id] = int32(d)
					df[id]++
				}
			})
		}
	}
	start := make([]int32, nt+1)
	for i := range nt {
		start[i+1] = start[i] + df[i]
	}
	all2 := make([]posting, start[nt])
	fill := slices.Clone(start[:nt])
	acc := make([]float64, nt)
	var touched []int32
	for d := range n {
		touched = touched[:0]
		for k := range numFields {
			l := lens[d*numFields+k]
			if l == 0 {
				continue
			}
			fp := fieldParams[k]
			norm := fp.weight / (1 - fp.b + fp.b*float64(l)/avg[k])
			terms(d, k, func(id int32) {
				if acc[id] == 0 {
					touched = append(touched, id)
				}
				acc[id] += norm
			})
		}
		for _, id := range touched {
			all2[fill[id]] = posting{doc: int32(d), tf: float32(acc[id])}
			fill[id]++
			acc[id] = 0
		}
	}
	ix.postings = make([][]posting, nt)
	ix.idf = make([]float32, nt)
	for id := range nt {
		ps := all2[start[id]:start[id+1]:start[id+1]]
		ix.postings[id] = ps
		df := float64(len(ps))
		ix.idf[id] = float32(math.Log(1 + (float64(n)-df+0.5)/(df+0.5)))
	}
	ix.syn = buildSynonyms(&stemmer{cache: make(map[string]string)})
	ix.sorted = slices.Clone(ix.termStr)
	slices.Sort(ix.sorted)
	return ix
}

// text returns "name description" of document d, what DeerFlow's regex
// searched.
func (ix *index) text(d int32) string { return ix.names[d] + " " + ix.descs[d] }

// asciiAlnum is isASCIIAlnum as a table.
var asciiAlnum = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = isASCIIAlnum(byte(c))
	}
	return t
}()

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

// runTable maps the ASCII runs of the catalogue, as written, to their
// analysis. It is an open-addressing table keyed by an FNV-1a hash that
// the scanner computes while it finds the run, so a lookup reads the run
// once more only to compare it.
type runTable struct {
	slots  []int32  // entry index + 1, 0 when empty; len is a power of two
	hashes []uint32 // by entry
	keys   []string // by entry
	vals   []rawRun // by entry
}

func (t *runTable) init(n int) { t.slots = make([]int32, n) }

func (t *runTable) get(s string, h uint32) (rawRun, bool) {
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := t.slots[i]
		if e == 0 {
			return rawRun{}, false
		}
		if t.hashes[e-1] == h && t.keys[e-1] == s {
			return t.vals[e-1], true
		}
	}
}

// put adds s, which get did not find.
func (t *runTable) put(s string, h uint32, v rawRun) {
	if 2*(len(t.keys)+1) > len(t.slots) {
		t.slots = make([]int32, 2*len(t.slots))
		mask := uint32(len(t.slots) - 1)
		for e, eh := range t.hashes {
			i := eh & mask
			for t.slots[i] != 0 {
				i = (i + 1) & mask
			}
			t.slots[i] = int32(e + 1)
		}
	}
	t.hashes = append(t.hashes, h)
	t.keys = append(t.keys, s)
	t.vals = append(t.vals, v)
	mask := uint32(len(t.slots) - 1)
	i := h & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = int32(len(t.keys))
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
