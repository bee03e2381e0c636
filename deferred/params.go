package deferred

import "github.com/antlerhq/antler/tool"

// param is one parameter's name and description, read in place from its
// tool's schema (see forEachParam).
type param struct{ name, desc []byte }

// paramBatch holds the parameters of consecutive tools: the i-th tool's
// are params[ends[i-1]:ends[i]].
type paramBatch struct {
	params []param
	ends   []int32
}

// paramBatchSize is how many tools' parameters are handed over at once.
const paramBatchSize = 256

// paramReader reads the parameters of a catalogue's schemas on its own
// goroutine, beside the analysis of names and descriptions: scanning the
// JSON needs no shared state, and it is a quarter of the build's work.
// The channel holds every batch, so the goroutine never blocks and always
// ends.
type paramReader struct {
	ch <-chan paramBatch
	b  paramBatch
	i  int // next tool of b
}

func readParams(tools []*tool.Tool) *paramReader {
	ch := make(chan paramBatch, (len(tools)+paramBatchSize-1)/paramBatchSize)
	go func() {
		defer close(ch)
		for from := 0; from < len(tools); from += paramBatchSize {
			to := min(from+paramBatchSize, len(tools))
			b := paramBatch{params: make([]param, 0, 4*(to-from)), ends: make([]int32, 0, to-from)}
			for _, t := range tools[from:to] {
				forEachParam(t.InputSchema, func(name, desc []byte) {
					b.params = append(b.params, param{name: name, desc: desc})
				})
				b.ends = append(b.ends, int32(len(b.params)))
			}
			ch <- b
		}
	}()
	return &paramReader{ch: ch}
}

// next returns the parameters of the next tool, in catalogue order.
func (r *paramReader) next() []param {
	if r.i == len(r.b.ends) {
		r.b, r.i = <-r.ch, 0
	}
	start := int32(0)
	if r.i > 0 {
		start = r.b.ends[r.i-1]
	}
	ps := r.b.params[start:r.b.ends[r.i]]
	r.i++
	return ps
}
