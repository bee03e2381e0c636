package deferred

import (
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/antlerhq/antler/tool"
)

// The build splits the catalogue in two: the analyser works through the
// first part while a second goroutine reads the letter/digit runs of the
// second part into a part of its own (rawPart), numbering each distinct
// run as written by its first occurrence, and then runs the catalogue
// hash. The analyser goes on past the start of the part until the second
// goroutine is free, then analyses the part's new runs, in the part's
// order, and both goroutines replay the remaining documents from their
// run numbers, in chunks (see replay). Runs, words and terms are thus met
// in the same order as by one pass over the whole catalogue, so the
// index is the same, ids included.

// minSplit is the smallest catalogue that is split: below it, the second
// goroutine would cost more than it saves.
const minSplit = 256

// splitShare is the share of the catalogue's weight (see splitWeight)
// before the part the second goroutine reads, so that it finishes
// reading and hashing at about the time the analyser reaches the part:
// analysing the first documents costs most, as they hold most of the
// words met for the first time (on the 10k-tool benchmark, 2 cores).
// When the second goroutine is late, the analyser goes on.
const splitShare = 0.37

// splitWeight estimates what a tool costs to analyse: per byte, a
// description or name costs about three times a schema, most of which is
// JSON syntax.
func splitWeight(t *tool.Tool) int {
	return 3*(len(t.Name)+len(t.Description)) + len(t.InputSchema)
}

// splitPoint returns where the second goroutine's part starts: after all
// the tools when there is one processor or few tools.
func splitPoint(tools []*tool.Tool) int {
	if runtime.GOMAXPROCS(0) < 2 || len(tools) < minSplit {
		return len(tools)
	}
	total := 0
	for _, t := range tools {
		total += splitWeight(t)
	}
	target, acc := int(float64(total)*splitShare), 0
	for i, t := range tools {
		if acc += splitWeight(t); acc >= target {
			return i + 1
		}
	}
	return len(tools)
}

// Segments of a document in a rawPart.
const (
	segName = iota
	segLead
	segRest // the description after the lead
	segParamName
	segParamDescription
	numSegs
)

// rawPart is the second part of a catalogue read as run numbers: a run's
// number is its index in texts, in order of first occurrence.
type rawPart struct {
	raw     runTable // run as written → number (in rawRun.runs)
	texts   []string // by number: the run as written
	seq     []int32  // run numbers, document after document, segment after segment
	ends    []int32  // by document and segment: end of the segment in seq
	pd      []int32  // the current document's parameter descriptions
	servers map[string]bool
	srvList []string // the servers, in order of first occurrence
	srv     []string // by document: its server, "" for none
}

// read reads tools into p. Server names are read on their first
// occurrence, as the analyser reads them, but not kept: the analyser
// takes a server's terms from its own record.
func (p *rawPart) read(tools []*tool.Tool) {
	p.raw.init(1 << 14)
	size := 0
	for _, t := range tools {
		size += (len(t.Name)+len(t.Description))/6 + len(t.InputSchema)/40
	}
	p.seq = make([]int32, 0, size)
	p.ends = make([]int32, 0, numSegs*len(tools))
	p.servers = make(map[string]bool)
	p.srv = make([]string, len(tools))
	var srvBuf []int32
	end := func() { p.ends = append(p.ends, int32(len(p.seq))) }
	for i, t := range tools {
		p.seq = intern(p, p.seq, t.Name)
		end()
		srv := t.Meta["mcp_server"]
		p.srv[i] = srv
		if srv != "" && !p.servers[srv] {
			p.servers[srv] = true
			p.srvList = append(p.srvList, srv)
			srvBuf = intern(p, srvBuf[:0], srv)
		}
		lead := leadEnd(t.Description)
		p.seq = intern(p, p.seq, t.Description[:lead])
		end()
		p.seq = intern(p, p.seq, t.Description[lead:])
		end()
		p.pd = p.pd[:0]
		forEachParam(t.InputSchema, func(name, desc []byte) {
			p.seq = intern(p, p.seq, name)
			p.pd = intern(p, p.pd, desc)
		})
		end()
		p.seq = append(p.seq, p.pd...)
		end()
	}
}

// segment returns the run numbers of segment k of the part's i-th
// document.
func (p *rawPart) segment(i, k int) []int32 {
	j := i*numSegs + k
	start := int32(0)
	if j > 0 {
		start = p.ends[j-1]
	}
	return p.seq[start:p.ends[j]]
}

// intern appends the run numbers of s to dst, numbering new runs.
func intern[T text](p *rawPart, dst []int32, s T) []int32 {
	for i := 0; ; {
		start, end := nextRun(s, i)
		if start == len(s) {
			return dst
		}
		i = end
		run := s[start:end]
		prefix, h := hashRunAt(s, start, end)
		ri, ok := get(&p.raw, run, prefix, h)
		if !ok {
			ri = rawRun{runs: int32(len(p.texts))}
			p.texts = append(p.texts, string(run))
			put(&p.raw, run, prefix, h, ri)
		}
		dst = append(dst, ri.runs)
	}
}

// merge analyses the runs of p that the analyser has not met, in p's
// order, and returns the analysis of each of p's runs, by number.
func (a *analyzer) merge(p *rawPart) []rawRun {
	out := make([]rawRun, len(p.texts))
	for i, s := range p.texts {
		prefix, h := hashRun(s)
		ri, ok := get(&a.raw, s, prefix, h)
		if !ok {
			if isASCII(s) {
				ri = analyseASCIIRun(a, s)
			} else {
				ri = a.analyseRun(s)
			}
			put(&a.raw, s, prefix, h, ri)
		}
		out[i] = ri
	}
	return out
}

// replayRuns appends the term ids of the runs numbered nums to dst, as
// analyse does for their text; when doc ≥ 0 it also records the runs'
// regex-index runs for doc in rec.
func (a *analyzer) replayRuns(rec *runRecorder, dst []int32, nums []int32, rr []rawRun, doc int32) []int32 {
	for _, num := range nums {
		dst = a.useIn(rec, dst, rr[num], doc)
	}
	return dst
}

// replayChunk is how many documents of a part are replayed at a time.
const replayChunk = 256

// replay is the replay of a part's documents, once its runs are merged.
// Both goroutines take chunks of documents in turn and write each into a
// docWriter of its own: the analysis is over, so runData, the part and
// the servers' terms are only read. join then appends the chunks, in
// order, to the analyser's documents.
type replay struct {
	a        *analyzer
	p        *rawPart // tools[m0:]
	tools    []*tool.Tool
	m0, m    int // the replay is of tools[m:], m ≥ m0
	chunk    int
	runs     []rawRun           // by run number of p
	srvTerms map[string][]int32 // by server of p: its terms (see serverTerms)
	next     atomic.Int32       // the next chunk to take
	chunks   []replayed
}

// replayed is a chunk of replayed documents.
type replayed struct {
	w     docWriter
	occ   [][]runOcc    // its regex-index runs
	ready chan struct{} // closed when w and occ are written
}

// newReplay merges the runs of p, tools[m0:] read, and prepares the
// replay of tools[m:], the documents the analyser has not analysed.
// Merging after the analyser has gone past m0 is still right: the runs
// of tools[m0:m] are known, and the others first occur in tools[m:] in
// p's order.
func (a *analyzer) newReplay(p *rawPart, tools []*tool.Tool, m0, m, chunk int, servers map[string]int32) *replay {
	r := &replay{a: a, p: p, tools: tools, m0: m0, m: m, chunk: chunk, runs: a.merge(p)}
	r.srvTerms = make(map[string][]int32, len(p.srvList))
	for _, srv := range p.srvList {
		if sid, ok := servers[srv]; ok {
			r.srvTerms[srv] = a.ix.serverTerms[sid]
		} else {
			r.srvTerms[srv] = a.serverTerms(srv)
		}
	}
	r.chunks = make([]replayed, (len(tools)-m+chunk-1)/chunk)
	for i := range r.chunks {
		r.chunks[i].ready = make(chan struct{})
	}
	return r
}

// run replays chunks until none is left; g is the goroutine's scratch.
func (r *replay) run(g *docScratch) {
	for {
		c := int(r.next.Add(1)) - 1
		if c >= len(r.chunks) {
			return
		}
		from := r.m + c*r.chunk
		to := min(from+r.chunk, len(r.tools))
		// Sized from the part's run counts: a run is about one term.
		seq := r.p.ends[(to-r.m0)*numSegs-1]
		if from > r.m0 {
			seq -= r.p.ends[(from-r.m0)*numSegs-1]
		}
		out := &r.chunks[c]
		out.w = docWriter{
			flat:    make([]int32, 0, int(seq)*5/4+8*(to-from)),
			off:     make([]int32, 0, (to-from)*numFields),
			names:   make([]int32, 0, 8*(to-from)),
			bigrams: make([]nameBigram, 0, 4*(to-from)),
			g:       g,
		}
		rec := runRecorder{last: g.last, chunk: 32 * (to - from)}
		for d := from; d < to; d++ {
			r.doc(&out.w, &rec, d)
		}
		out.occ = rec.occ
		close(out.ready)
	}
}

// doc replays document d into w.
func (r *replay) doc(w *docWriter, rec *runRecorder, d int) {
	a, p, ix, t := r.a, r.p, r.a.ix, r.tools[d]
	i, doc := d-r.m0, int32(d)
	w.flat = a.replayRuns(rec, w.flat, p.segment(i, segName), r.runs, doc)
	w.endName(ix, d)
	ix.lowerNames[d] = lowerASCII(t.Name)
	ix.names[d] = t.Name
	ix.descs[d] = t.Description
	// The server's id is given by join, in document order.
	w.flat = append(w.flat, r.srvTerms[p.srv[i]]...)
	w.end(fieldServer)
	descStart := len(w.flat)
	w.flat = a.replayRuns(rec, w.flat, p.segment(i, segLead), r.runs, doc)
	leadTerms := len(w.flat) - descStart
	w.flat = a.replayRuns(rec, w.flat, p.segment(i, segRest), r.runs, doc)
	w.endDescription()
	w.flat = a.replayRuns(rec, w.flat, p.segment(i, segParamName), r.runs, -1)
	w.g.pd = a.replayRuns(rec, w.g.pd[:0], p.segment(i, segParamDescription), r.runs, -1)
	w.endDoc(descStart, leadTerms)
}

// join appends the replayed chunks to dst, in order, waiting for those
// the second goroutine is writing, adds the second goroutine's term sets
// to dst's, and gives the part's documents their servers' ids. It does
// not wait for the second goroutine to finish otherwise: when it took no
// chunk, it may still be running beside.
func (r *replay) join(dst *docWriter, servers map[string]int32) {
	var other *docScratch
	for c := range r.chunks {
		ch := &r.chunks[c]
		<-ch.ready
		if ch.w.g != dst.g {
			other = ch.w.g // complete once its last chunk is ready
		}
		base := int32(len(dst.flat))
		dst.flat = append(dst.flat, ch.w.flat...)
		for _, e := range ch.w.off {
			dst.off = append(dst.off, base+e)
		}
		dst.start = int32(len(dst.flat))
		for k := range numFields {
			dst.totalLen[k] += ch.w.totalLen[k]
		}
		dst.bigrams = append(dst.bigrams, ch.w.bigrams...)
		r.a.rec.occ = append(r.a.rec.occ, ch.occ...)
	}
	if other != nil {
		dst.g.union(other)
	}
	ix := r.a.ix
	for d := r.m; d < len(r.tools); d++ {
		ix.server[d] = -1
		if srv := r.p.srv[d-r.m0]; srv != "" {
			ix.server[d] = serverID(ix, servers, srv, r.srvTerms[srv])
		}
	}
}

// serverID returns the id of server srv, giving it the next one, with
// terms ids, when it has none.
func serverID(ix *index, servers map[string]int32, srv string, ids []int32) int32 {
	sid, ok := servers[srv]
	if !ok {
		sid = int32(len(ix.serverTerms))
		servers[srv] = sid
		ix.serverTerms = append(ix.serverTerms, ids)
	}
	return sid
}

// docScratch is what the documents written by one goroutine share.
type docScratch struct {
	pd                  []int32 // parameter descriptions of the current document
	nameTerm, proseTerm []bool  // by term id: in a name, in a description
	last                []int32 // by run id: the last document recorded (runRecorder.last)
}

// union adds the term sets of h to g's.
func (g *docScratch) union(h *docScratch) {
	for id, in := range h.nameTerm {
		if in {
			mark(&g.nameTerm, id)
		}
	}
	for id, in := range h.proseTerm {
		if in {
			mark(&g.proseTerm, id)
		}
	}
}

func mark(set *[]bool, id int) {
	for id >= len(*set) {
		*set = append(*set, false)
	}
	(*set)[id] = true
}

// docWriter writes documents' term ids, field after field, into flat
// (see buildIndexSplit), and what the index takes from them besides.
type docWriter struct {
	flat     []int32
	off      []int32 // the end of each field in flat
	start    int32   // the start of the field being written
	totalLen [numFields]float64
	names    []int32      // each document's name terms, once (ix.nameTerms)
	bigrams  []nameBigram // consecutive name terms, documents ascending
	g        *docScratch
}

// end ends field k.
func (w *docWriter) end(k int) {
	e := int32(len(w.flat))
	w.off = append(w.off, e)
	w.totalLen[k] += float64(e - w.start)
	w.start = e
}

// endName ends the name field of document d.
func (w *docWriter) endName(ix *index, d int) {
	nt := w.flat[w.start:]
	doc := int32(d)
	for i := 1; i < len(nt); i++ {
		if nt[i-1] == nt[i] {
			continue
		}
		w.bigrams = append(w.bigrams, nameBigram{key: bigram(nt[i-1], nt[i]), doc: doc})
	}
	nameStart := len(w.names)
	for _, id := range nt {
		if !slices.Contains(w.names[nameStart:], id) {
			w.names = append(w.names, id)
		}
	}
	ix.nameTerms[d] = w.names[nameStart:len(w.names):len(w.names)]
	for _, id := range w.names[nameStart:] {
		mark(&w.g.nameTerm, int(id))
	}
	w.end(fieldName)
}

// endDescription ends the description field.
func (w *docWriter) endDescription() {
	for _, id := range w.flat[w.start:] {
		mark(&w.g.proseTerm, int(id))
	}
	w.end(fieldDescription)
}

// endDoc ends the parameter name field and writes the document's last
// fields: its parameter descriptions (in g.pd) and its lead sentence,
// the first leadTerms terms of its description, at descStart.
func (w *docWriter) endDoc(descStart, leadTerms int) {
	w.end(fieldParamName)
	w.flat = append(w.flat, w.g.pd...)
	w.end(fieldParamDescription)
	w.flat = append(w.flat, w.flat[descStart:descStart+leadTerms]...)
	w.end(fieldLead)
}

// analyseDoc analyses document d, tools d, into w.
func (a *analyzer) analyseDoc(w *docWriter, t *tool.Tool, d int, servers map[string]int32) {
	ix, doc := a.ix, int32(d)
	w.flat = a.terms(w.flat, t.Name, doc)
	w.endName(ix, d)
	ix.lowerNames[d] = lowerASCII(t.Name)
	ix.names[d] = t.Name
	ix.descs[d] = t.Description
	ix.server[d] = -1
	if srv := t.Meta["mcp_server"]; srv != "" {
		sid, ok := servers[srv]
		if !ok {
			sid = serverID(ix, servers, srv, a.serverTerms(srv))
		}
		ix.server[d] = sid
		w.flat = append(w.flat, ix.serverTerms[sid]...)
	}
	w.end(fieldServer)
	// The lead sentence is analysed first so that its terms, a prefix of
	// the description's, can be copied into the lead field.
	descStart := len(w.flat)
	lead := leadEnd(t.Description)
	w.flat = a.terms(w.flat, t.Description[:lead], doc)
	leadTerms := len(w.flat) - descStart
	w.flat = a.terms(w.flat, t.Description[lead:], doc)
	w.endDescription()
	w.g.pd = w.g.pd[:0]
	forEachParam(t.InputSchema, func(name, desc []byte) {
		w.flat = analyse(a, w.flat, name, -1)
		w.g.pd = analyse(a, w.g.pd, desc, -1)
	})
	w.endDoc(descStart, leadTerms)
}

// serverTerms analyses the name of a server: its term ids, each once.
func (a *analyzer) serverTerms(srv string) []int32 {
	var ids []int32
	for _, id := range a.terms(nil, srv, -1) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}
