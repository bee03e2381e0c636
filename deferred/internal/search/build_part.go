package search

import (
	"runtime"

	"github.com/antlerhq/antler/tool"
)

// The build splits the catalogue in two: the analyser works through the
// first part while a second goroutine reads the letter/digit runs of the
// second part into a part of its own (rawPart), numbering each distinct
// run as written by its first occurrence, and then runs the caller's
// beside function (see [Build]). The analyser then analyses the part's
// new runs, in the part's order, and replays the part's documents from
// their run numbers. Runs, words and terms are thus met in the same order
// as by one pass over the whole catalogue, so the index is the same, ids
// included.

// minSplit is the smallest catalogue that is split: below it, the second
// goroutine would cost more than it saves.
const minSplit = 256

// splitShare is the share of the catalogue's weight (see splitWeight) the
// analyser takes, so that both goroutines finish their parts at about the
// same time: reading a part's runs costs about 60 % of analysing them.
// The analyser then replays the part (about a quarter of what analysing
// it would cost) and lays out the postings while the second goroutine
// runs beside, which for package deferred hashes the catalogue (measured
// on the 10k-tool benchmark, 2 cores).
const splitShare = 0.37

// splitWeight estimates what a tool costs to analyse: per byte, a
// description or name costs about three times a schema, most of which is
// JSON syntax.
func splitWeight(t *tool.Tool) int {
	return 3*(len(t.Name)+len(t.Description)) + len(t.InputSchema)
}

// splitPoint returns the number of tools the analyser takes itself: all
// of them when there is one processor or few tools.
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
	var srvBuf []int32
	end := func() { p.ends = append(p.ends, int32(len(p.seq))) }
	for _, t := range tools {
		p.seq = intern(p, p.seq, t.Name)
		end()
		if srv := t.Meta[serverKey]; srv != "" && !p.servers[srv] {
			p.servers[srv] = true
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

// replay appends the term ids of the runs numbered nums to dst, as
// analyse does for their text; when doc ≥ 0 it also records the runs'
// regex-index runs for doc.
func (a *analyzer) replay(dst []int32, nums []int32, rr []rawRun, doc int32) []int32 {
	for _, num := range nums {
		dst = a.use(dst, rr[num], doc)
	}
	return dst
}
