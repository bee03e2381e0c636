package mcptools

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
)

// defaultMaxSessions bounds the per-thread stdio sessions kept open
// (DeerFlow's pool size).
const defaultMaxSessions = 256

// errClosed is returned once the Manager is closed.
var errClosed = errors.New("mcptools: manager closed")

// poolKey names a session: a server and a scope. Scope "" is the server's
// control session (discovery, list_changed, calls without a thread, and
// every call of an sse or http server); it is never evicted. Other scopes
// are "<user>:<thread>" sessions of stdio servers, kept in LRU order.
type poolKey struct {
	server *server
	scope  string
}

type poolEntry struct {
	key   poolKey
	elem  *list.Element // position in the LRU list; nil for control sessions
	ready chan struct{} // closed when creation finished

	// set before ready is closed, then immutable:
	sess *session
	err  error

	// guarded by pool.mu:
	refs    int  // callers using sess
	removed bool // no longer in the pool; close sess when refs reaches 0
	closed  bool // sess was handed to close
}

// pool holds the open sessions. Concurrent callers of one key share one
// creation; a removed session still in use is closed when its last caller
// releases it.
type pool struct {
	max   int            // immutable
	close func(*session) // immutable; closes a session in the background

	mu      sync.Mutex
	entries map[poolKey]*poolEntry // guarded by mu
	lru     *list.List             // guarded by mu; of *poolEntry, most recent first
	closed  bool                   // guarded by mu
}

func newPool(max int, close func(*session)) *pool {
	return &pool{max: max, close: close, entries: map[poolKey]*poolEntry{}, lru: list.New()}
}

// acquire returns the live session of key, creating it with create when
// there is none. The caller must release the entry.
func (p *pool) acquire(ctx context.Context, key poolKey, create func() (*session, error)) (*poolEntry, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, errClosed
		}
		e := p.entries[key]
		if e == nil {
			e = &poolEntry{key: key, ready: make(chan struct{}), refs: 1}
			p.entries[key] = e
			if key.scope != "" {
				e.elem = p.lru.PushFront(e)
				p.evictLocked()
			}
			p.mu.Unlock()
			sess, err := create()
			p.mu.Lock()
			e.sess, e.err = sess, err
			close(e.ready)
			if err != nil {
				p.removeLocked(e)
				e.refs--
				p.mu.Unlock()
				return nil, err
			}
			p.mu.Unlock()
			return e, nil
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

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// release ends one use of e.
func (p *pool) release(e *poolEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.refs--
	p.maybeCloseLocked(e)
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

// evictLocked drops least recently used thread sessions beyond max.
func (p *pool) evictLocked() {
	for p.lru.Len() > p.max {
		p.removeLocked(p.lru.Back().Value.(*poolEntry))
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

func (k poolKey) String() string { return fmt.Sprintf("%s[%s]", k.server.name, k.scope) }
