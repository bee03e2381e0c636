package agent

import (
	"sync"
	"weak"

	"github.com/antlerhq/antler/model"
)

// wellFormedPrefix remembers the longest request history found well
// formed, so that the next request of the same run, which extends it,
// is checked only from where the last check ended (a boundary between
// turns). The array is held weakly: the middleware never keeps a
// finished run's history alive. Safe for concurrent use; requests of
// other runs (another array) are checked whole and replace the entry.
type wellFormedPrefix struct {
	mu   sync.Mutex
	base weak.Pointer[model.Message] // &msgs[0] of the last well-formed history
	n    int                         // its length
	// scanned counts the messages the checks looked at (for tests).
	scanned int
}

// ok reports whether msgs needs no repair, scanning only the messages
// after the remembered well-formed prefix when msgs extends it.
func (p *wellFormedPrefix) ok(msgs []model.Message) bool {
	if len(msgs) == 0 {
		return true
	}
	base := weak.Make(&msgs[0])
	p.mu.Lock()
	from := 0
	if base == p.base && len(msgs) >= p.n {
		from = p.n
	}
	p.mu.Unlock()
	good := wellFormedFrom(msgs, from)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scanned += len(msgs) - from
	if good {
		p.base, p.n = base, len(msgs)
	}
	return good
}
