package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// maxMarks bounds the read marks one sandbox keeps; beyond it the oldest
// half is forgotten (a forgotten mark only means one more read).
const maxMarks = 4096

// ReadTracker remembers, per host path, the sha256 of the content the
// agent last read with read_file. The read-before-write gate lets a write
// through only when the file still has that content. A ReadTracker belongs
// to one thread's [Sandbox]; the zero value is ready and it is safe for
// concurrent use.
type ReadTracker struct {
	mu    sync.Mutex
	marks map[string]mark // guarded by mu; key = host path
	seq   uint64          // guarded by mu
}

type mark struct {
	sum string
	seq uint64
}

// contentHash returns the hex sha256 the tracker stores for content.
func contentHash(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// Mark records that the agent read host at content hash sum.
func (t *ReadTracker) Mark(host, sum string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.marks == nil {
		t.marks = map[string]mark{}
	}
	if len(t.marks) >= maxMarks {
		t.evictOldestHalf()
	}
	t.seq++
	t.marks[host] = mark{sum: sum, seq: t.seq}
}

// Get returns the hash of the last read of host.
func (t *ReadTracker) Get(host string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.marks[host]
	return m.sum, ok
}

// Forget drops the mark of host; every write calls it, so that any write
// invalidates earlier reads.
func (t *ReadTracker) Forget(host string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.marks, host)
}

// Len returns the number of marks.
func (t *ReadTracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.marks)
}

func (t *ReadTracker) evictOldestHalf() {
	var cut uint64
	if t.seq > uint64(len(t.marks)/2) {
		cut = t.seq - uint64(len(t.marks)/2)
	}
	for k, m := range t.marks {
		if m.seq <= cut {
			delete(t.marks, k)
		}
	}
}

// pathLocks is a set of mutexes keyed by host path, created on demand and
// dropped when unused. The zero value is ready.
type pathLocks struct {
	mu    sync.Mutex
	locks map[string]*refLock // guarded by mu
}

type refLock struct {
	mu   sync.Mutex
	refs int // guarded by pathLocks.mu
}

// lock locks key and returns its unlock function.
func (p *pathLocks) lock(key string) (unlock func()) {
	p.mu.Lock()
	if p.locks == nil {
		p.locks = map[string]*refLock{}
	}
	l := p.locks[key]
	if l == nil {
		l = &refLock{}
		p.locks[key] = l
	}
	l.refs++
	p.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		p.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(p.locks, key)
		}
		p.mu.Unlock()
	}
}
