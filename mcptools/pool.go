package mcptools

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errClosed is returned once the Manager is closed.
var errClosed = errors.New("mcptools: manager closed")

// poolKey names a session: a server and a scope. Scope "" is the server's
// control session (discovery, list_changed, calls without a thread, every
// call of an sse or http server, and every call of a stdio server with
// "process_scope": "shared"). Other scopes are "<user>:<thread>" sessions
// of stdio servers.
type poolKey struct {
	server *server
	scope  string
}

type poolEntry struct {
	key   poolKey
	elem  *list.Element // position in the LRU list of processes; nil for other sessions
	ready chan struct{} // closed when creation finished

	// set before ready is closed, then immutable:
	sess *session
	err  error

	// guarded by pool.mu:
	refs      int       // callers using sess
	idleSince time.Time // when refs last reached 0
	rss       int64     // resident memory of the process, last measured; 0 unknown
	rssAt     time.Time // when rss was measured
	removed   bool      // no longer in the pool; close sess when refs reaches 0
	closed    bool      // sess was handed to close
}

// idleLocked reports whether e is a live session no call uses.
func (e *poolEntry) idleLocked() bool { return e.refs == 0 && e.sess != nil && !e.removed }

// pool holds the open sessions. Concurrent callers of one key share one
// creation; a removed session still in use is closed when its last caller
// releases it.
//
// Stdio sessions are processes, and their number is bounded by limits:
// a new one first closes the least recently used idle process when the
// bound is reached, and waits (up to limits.wait) for a call to end when
// every process has a call in flight. A process is never closed under a
// call. Processes idle for limits.idle are closed by sweep.
type pool struct {
	limits processLimits        // immutable
	now    func() time.Time     // immutable
	close  func(*session)       // immutable; closes a session in the background
	rss    func(*session) int64 // immutable; measures a process, 0 unknown

	mu      sync.Mutex
	entries map[poolKey]*poolEntry // guarded by mu
	lru     *list.List             // guarded by mu; processes (*poolEntry), most recent first
	freed   chan struct{}          // guarded by mu; closed (and replaced) when a process became idle or went away
	closed  bool                   // guarded by mu
}

func newPool(limits processLimits, now func() time.Time, close func(*session), rss func(*session) int64) *pool {
	return &pool{limits: limits, now: now, close: close, rss: rss,
		entries: map[poolKey]*poolEntry{}, lru: list.New(), freed: make(chan struct{})}
}

// boundError is the error of a caller that found every process within
// the bound busy for as long as it may wait.
type boundError struct {
	bound string // the bound, described
	wait  time.Duration
}

func (e *boundError) Error() string {
	return fmt.Sprintf("the bound of %s is reached and every process has a call in flight (waited %s for one to finish)",
		e.bound, e.wait)
}

// isProcess reports whether sessions of key are stdio server processes.
func (k poolKey) isProcess() bool { return k.server.cfg.Type == "stdio" }

// acquire returns the live session of key, creating it with create when
// there is none. The caller must release the entry.
func (p *pool) acquire(ctx context.Context, key poolKey, create func() (*session, error)) (*poolEntry, error) {
	var deadline <-chan time.Time // set when the caller first has to wait for a slot
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, errClosed
		}
		p.sweepLocked()
		e := p.entries[key]
		if e == nil {
			if key.isProcess() {
				if n, estimate, ok := p.slotLocked(); !ok {
					freed := p.freed
					p.mu.Unlock()
					if deadline == nil {
						timer := time.NewTimer(p.limits.wait)
						defer timer.Stop()
						deadline = timer.C
					}
					select {
					case <-freed:
						continue
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-deadline:
						return nil, &boundError{bound: p.limits.describe(n, estimate), wait: p.limits.wait}
					}
				}
			}
			return p.createLocked(key, create)
		}
		e.refs++
		if e.elem != nil {
			p.lru.MoveToFront(e.elem)
		}
		p.mu.Unlock()

		select {
		case <-e.ready:
		case <-ctx.Done():
			p.release(e)
			return nil, ctx.Err()
		}
		switch {
		case e.err != nil:
			p.release(e)
			// The creator's own deadline or cancellation is not ours.
			if isContextErr(e.err) && ctx.Err() == nil {
				continue
			}
			return nil, e.err
		case !e.sess.alive():
			p.remove(e)
			p.release(e)
			continue
		}
		return e, nil
	}
}

// createLocked adds the entry of key and creates its session; it is
// called with p.mu held and returns with it released.
func (p *pool) createLocked(key poolKey, create func() (*session, error)) (*poolEntry, error) {
	e := &poolEntry{key: key, ready: make(chan struct{}), refs: 1}
	p.entries[key] = e
	if key.isProcess() {
		e.elem = p.lru.PushFront(e)
	}
	p.mu.Unlock()
	sess, err := create()
	p.mu.Lock()
	defer p.mu.Unlock()
	e.sess, e.err = sess, err
	close(e.ready)
	if err != nil {
		p.removeLocked(e)
		e.refs--
		return nil, err
	}
	return e, nil
}

// slotLocked makes room for one more process, closing idle ones from the
// least recently used, and reports whether there is room now, with the
// bound it applied.
func (p *pool) slotLocked() (n int, estimate int64, ok bool) {
	n, estimate = p.limits.bound(p.measuredLocked())
	for el := p.lru.Back(); el != nil && p.lru.Len() >= n; {
		e := el.Value.(*poolEntry)
		el = el.Prev()
		if e.idleLocked() {
			p.removeLocked(e)
		}
	}
	return n, estimate, p.lru.Len() < n
}

// sweepLocked closes the processes idle for longer than limits.idle (a
// negative idle timeout keeps them).
func (p *pool) sweepLocked() {
	if p.limits.idle < 0 {
		return
	}
	now := p.now()
	for el := p.lru.Back(); el != nil; {
		e := el.Value.(*poolEntry)
		el = el.Prev()
		if e.idleLocked() && now.Sub(e.idleSince) >= p.limits.idle {
			p.removeLocked(e)
		}
	}
}

// sweep closes the processes idle for longer than limits.idle.
func (p *pool) sweep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked()
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// release ends one use of e. The last use of a process measures its
// resident memory when the last measurement is older than rssRefresh.
func (p *pool) release(e *poolEntry) {
	p.mu.Lock()
	e.refs--
	now := p.now()
	measure := e.refs == 0 && e.elem != nil && e.sess != nil && !e.removed && now.Sub(e.rssAt) >= rssRefresh
	if measure {
		e.rssAt = now // no second measurement meanwhile
	}
	p.mu.Unlock()
	var rss int64
	if measure {
		rss = p.rss(e.sess)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if rss > 0 {
		e.rss = rss
	}
	if e.refs == 0 {
		e.idleSince = now
		if e.elem != nil {
			p.signalLocked()
		}
	}
	p.maybeCloseLocked(e)
}

// signalLocked wakes the callers waiting for a process slot.
func (p *pool) signalLocked() {
	close(p.freed)
	p.freed = make(chan struct{})
}

// remove takes e out of the pool; its session closes once unused.
func (p *pool) remove(e *poolEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.removeLocked(e)
}

func (p *pool) removeLocked(e *poolEntry) {
	if p.entries[e.key] == e {
		delete(p.entries, e.key)
	}
	if e.elem != nil {
		p.lru.Remove(e.elem)
		e.elem = nil
		p.signalLocked()
	}
	e.removed = true
	p.maybeCloseLocked(e)
}

func (p *pool) maybeCloseLocked(e *poolEntry) {
	if e.removed && e.refs == 0 && e.sess != nil && !e.closed {
		e.closed = true
		p.close(e.sess)
	}
}

// removeSession drops the entry holding s, if any (s ended by itself).
func (p *pool) removeSession(rt *server, s *session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, e := range p.entries {
		if k.server == rt && e.sess == s {
			p.removeLocked(e)
			return
		}
	}
}

// removeServer drops every session of rt.
func (p *pool) removeServer(rt *server) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, e := range p.entries {
		if k.server == rt {
			p.removeLocked(e)
		}
	}
}

// closeAll closes every session, also those in use (their calls fail),
// and refuses new ones.
func (p *pool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, e := range p.entries {
		p.removeLocked(e)
		if e.sess != nil && !e.closed {
			e.closed = true
			p.close(e.sess)
		}
	}
	p.signalLocked()
}

// count returns the number of open sessions of rt, for Status and tests.
func (p *pool) count(rt *server) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k := range p.entries {
		if k.server == rt {
			n++
		}
	}
	return n
}

// processes returns the number of stdio processes in the pool and the
// bound that applies now.
func (p *pool) processes() (n, bound int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	bound, _ = p.limits.bound(p.measuredLocked())
	return p.lru.Len(), bound
}

// measuredLocked returns the resident memory of every process measured.
func (p *pool) measuredLocked() []int64 {
	var rss []int64
	for el := p.lru.Front(); el != nil; el = el.Next() {
		if r := el.Value.(*poolEntry).rss; r > 0 {
			rss = append(rss, r)
		}
	}
	return rss
}

func (k poolKey) String() string { return fmt.Sprintf("%s[%s]", k.server.name, k.scope) }
