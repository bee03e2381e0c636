package search

import (
	"math"
	"slices"

	"github.com/antlerhq/antler/tool"
)

// fieldBuild is the analyser's side of a build (see buildIndexSplit): it
// analyses tools[:m] itself, replays tools[m:] from the second
// goroutine's part, and collects the term ids of every document's fields
// together with what the index keeps of them. It lives on the stack of
// buildIndexSplit; nothing keeps a pointer to it.
type fieldBuild struct {
	ix       *Index
	a        *analyzer
	m        int           // the analyser analyses tools[:m] itself
	part     *rawPart      // tools[m:], read by the second goroutine
	done     chan struct{} // closed once part is read
	partRuns []rawRun      // by run number of part, once done is closed

	// flat holds the term ids of every document, field after field, in
	// one array: document d's field k is
	// flat[off[d*numFields+k]:off[d*numFields+k+1]].
	flat, off []int32
	totalLen  [numFields]float64 // by field: the sum of its lengths

	names     []int32      // the distinct name terms of every document, back to back
	bigrams   []nameBigram // consecutive name terms, documents ascending
	pd        []int32      // parameter descriptions of the current document
	nameTerm  []bool       // by term id: it occurs in a name or server name
	proseTerm []bool       // by term id: it occurs in a description
}

// reserve sizes flat, off, names and bigrams for tools, so that they
// rarely grow: growing flat copies it. flat gets about one term per five
// bytes of prose and one per 32 bytes of schema, most of which is JSON
// syntax and types. English prose has about one term per eight bytes,
// but the lead sentence counts twice and Chinese text, three bytes a
// character, yields a bigram per character and the words of its glosses:
// on the LiveMCPBench catalogue (9 % of the prose bytes not ASCII) one
// per eight bytes fell 30 % short.
func (b *fieldBuild) reserve(tools []*tool.Tool) {
	n := len(tools)
	size := 0
	for _, t := range tools {
		size += (len(t.Name)+len(t.Description))/5 + len(t.InputSchema)/32
	}
	b.flat = make([]int32, 0, size+4*n)
	b.off = make([]int32, 1, n*numFields+1)
	b.names = make([]int32, 0, 8*n)
	b.bigrams = make([]nameBigram, 0, 4*n)
}

// documents analyses or replays every tool's fields, in document order;
// servers numbers the server names met (it is a parameter, not a field,
// so that it stays on the caller's stack). The analyser reaches tools[m]
// only once the part is read, and then analyses the part's new runs
// before replaying its documents.
func (b *fieldBuild) documents(tools []*tool.Tool, servers map[string]int32) {
	for d, t := range tools {
		if d == b.m {
			<-b.done
			b.partRuns = b.a.merge(b.part)
		}
		b.nameField(d, t)
		b.serverField(d, t, servers)
		b.proseFields(d, t)
		b.ix.descs[d] = t.Description
	}
}

// end closes field k of the current document at the end of flat.
func (b *fieldBuild) end(k int) {
	b.off = append(b.off, int32(len(b.flat)))
	b.totalLen[k] += float64(b.off[len(b.off)-1] - b.off[len(b.off)-2])
}

// nameField appends the terms of document d's name to flat and records
// its consecutive term pairs, its distinct terms and its name as written
// and lowercased.
func (b *fieldBuild) nameField(d int, t *tool.Tool) {
	ix, doc := b.ix, int32(d)
	if d < b.m {
		b.flat = b.a.terms(b.flat, t.Name, doc)
	} else {
		b.flat = b.a.replay(b.flat, b.part.segment(d-b.m, segName), b.partRuns, doc)
	}
	b.end(fieldName)
	nt := b.flat[b.off[len(b.off)-2]:]
	bigrams := b.bigrams
	for i := 1; i < len(nt); i++ {
		if nt[i-1] == nt[i] {
			continue
		}
		bigrams = append(bigrams, nameBigram{key: bigram(nt[i-1], nt[i]), doc: doc})
	}
	b.bigrams = bigrams
	names := b.names
	nameStart := len(names)
	for _, id := range nt {
		if !slices.Contains(names[nameStart:], id) {
			names = append(names, id)
		}
	}
	b.names = names
	ix.nameTerms[d] = names[nameStart:len(names):len(names)]
	markTerms(&b.nameTerm, names[nameStart:])
	ix.lowerNames[d] = lowerASCII(t.Name)
	ix.names[d] = t.Name
}

// serverField appends the terms of document d's server name, if it has
// one, to flat and records its server id (see serverID).
func (b *fieldBuild) serverField(d int, t *tool.Tool, servers map[string]int32) {
	ix := b.ix
	ix.server[d] = -1
	if srv := t.Meta[serverKey]; srv != "" {
		sid := b.serverID(srv, servers)
		ix.server[d] = sid
		b.flat = append(b.flat, ix.serverTerms[sid]...)
	}
	b.end(fieldServer)
}

// serverID returns the id of server name srv in servers, numbering it
// and recording its distinct terms on its first occurrence.
func (b *fieldBuild) serverID(srv string, servers map[string]int32) int32 {
	ix := b.ix
	if sid, ok := servers[srv]; ok {
		return sid
	}
	sid := int32(len(ix.serverTerms))
	servers[srv] = sid
	var ids []int32
	for _, id := range b.a.terms(nil, srv, -1) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	ix.serverTerms = append(ix.serverTerms, ids)
	return sid
}

// proseFields appends document d's description, parameter name,
// parameter description and lead fields to flat. The lead sentence is
// analysed first so that its terms, a prefix of the description's, can
// be copied into the lead field.
func (b *fieldBuild) proseFields(d int, t *tool.Tool) {
	descStart := len(b.flat)
	var leadTerms int
	b.pd = b.pd[:0]
	if d < b.m {
		lead := leadEnd(t.Description)
		b.flat = b.a.terms(b.flat, t.Description[:lead], int32(d))
		leadTerms = len(b.flat) - descStart
		b.flat = b.a.terms(b.flat, t.Description[lead:], int32(d))
		markTerms(&b.proseTerm, b.flat[b.off[len(b.off)-1]:])
		b.end(fieldDescription)
		forEachParam(t.InputSchema, func(name, desc []byte) {
			b.flat = analyse(b.a, b.flat, name, -1)
			b.pd = analyse(b.a, b.pd, desc, -1)
		})
	} else {
		i := d - b.m
		b.flat = b.a.replay(b.flat, b.part.segment(i, segLead), b.partRuns, int32(d))
		leadTerms = len(b.flat) - descStart
		b.flat = b.a.replay(b.flat, b.part.segment(i, segRest), b.partRuns, int32(d))
		markTerms(&b.proseTerm, b.flat[b.off[len(b.off)-1]:])
		b.end(fieldDescription)
		b.flat = b.a.replay(b.flat, b.part.segment(i, segParamName), b.partRuns, -1)
		b.pd = b.a.replay(b.pd, b.part.segment(i, segParamDescription), b.partRuns, -1)
	}
	b.end(fieldParamName)
	b.flat = append(b.flat, b.pd...)
	b.end(fieldParamDescription)
	b.flat = append(b.flat, b.flat[descStart:descStart+leadTerms]...)
	b.end(fieldLead)
}

// markTerms sets (*set)[id] for each of ids, growing *set as needed.
func markTerms(set *[]bool, ids []int32) {
	for _, id := range ids {
		for int(id) >= len(*set) {
			*set = append(*set, false)
		}
		(*set)[id] = true
	}
}

// compoundParts returns, by term id, the parts of the compound
// identifiers of names and server names (datagov, hdbcarpark), which
// also count their parts, when they occur nowhere in prose (so
// "generate" is never read as "gene rate").
func (b *fieldBuild) compoundParts() [][]int32 {
	ix := b.ix
	compound := make([][]int32, len(ix.termStr))
	for w, id := range ix.words {
		if id >= 0 && int(id) < len(b.nameTerm) && b.nameTerm[id] && (int(id) >= len(b.proseTerm) || !b.proseTerm[id]) {
			compound[id] = ix.splitCompound(w)
		}
	}
	return compound
}

// fieldLengths returns the length of every document's fields, by
// document and field; those of names and server names count compound
// parts too, and so do their totals in totalLen.
func (b *fieldBuild) fieldLengths(compound [][]int32) []int32 {
	n := b.ix.n
	lens := make([]int32, n*numFields)
	for d := range n {
		for k := range numFields {
			a, e := b.off[d*numFields+k], b.off[d*numFields+k+1]
			c := e - a
			if k == fieldName || k == fieldServer {
				for _, id := range b.flat[a:e] {
					c += int32(len(compound[id]))
				}
				b.totalLen[k] += float64(c - (e - a))
			}
			lens[d*numFields+k] = c
		}
	}
	return lens
}

// postings lays out the index's postings and IDFs from the fields'
// terms.
func (b *fieldBuild) postings(compound [][]int32) {
	ix, n := b.ix, b.ix.n
	lens := b.fieldLengths(compound)
	var avg [numFields]float64
	for k := range numFields {
		avg[k] = max(b.totalLen[k]/float64(max(n, 1)), 1)
	}
	nt := len(ix.termStr)
	in := postingsInput{n: n, nt: nt, flat: b.flat, off: b.off, lens: lens, compound: compound, avg: avg, field: ix.p.field}
	ix.postings = in.postings()
	ix.idf = make([]float32, nt)
	for id, ps := range ix.postings {
		df := float64(len(ps))
		ix.idf[id] = float32(math.Log(1 + (float64(n)-df+0.5)/(df+0.5)))
	}
}
