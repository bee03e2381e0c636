package cpmsg

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// The bounds of a Cache.
const (
	// CacheThreads is how many threads a Cache remembers.
	CacheThreads = 128
	// CacheBytes bounds the decoded messages a Cache keeps, counted as
	// the size of their JSON bodies plus MessageOverhead per message:
	// beyond it the least recently used threads lose their messages
	// (their ids and hashes stay). A thread larger than a quarter of it
	// never keeps its messages.
	CacheBytes = 64 << 20
	// MessageOverhead is what a decoded message is counted beyond its
	// JSON body (the struct, its id and hash).
	MessageOverhead = 256
)

// Cache remembers the Parent of each thread's most recently written or
// read checkpoint, for the CacheThreads most recently used threads, so
// that writing the next checkpoint does not read the parent back, and
// reading the latest one again (the next run of the thread) does not
// read and decode its messages. A Parent is immutable once stored and
// checkpoint ids, message row ids and message rows are never reused or
// rewritten, so an entry is never stale: a write whose parent is not
// the entry's checkpoint reads its parent instead, and a read of another
// checkpoint (another replica wrote a newer one) reads its rows. The
// zero value is ready to use and safe for concurrent use.
type Cache struct {
	mu      sync.Mutex         // guards the fields below
	entries map[string]*Parent // by thread id
	order   []string           // thread ids, least recently used first
	size    int64              // cost of the entries' Messages

	encoded, decoded atomic.Int64
}

// cost is what p's decoded messages count against CacheBytes.
func cost(p *Parent) int64 {
	if p.Messages == nil {
		return 0
	}
	return p.Bytes + MessageOverhead*int64(len(p.Messages))
}

// Get returns the Parent remembered for checkpointID of threadID, or nil.
func (c *Cache) Get(threadID, checkpointID string) *Parent {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.entries[threadID]
	if p == nil || p.CheckpointID != checkpointID {
		return nil
	}
	c.touch(threadID)
	return p
}

// Lookup returns the Parent remembered for checkpointID of threadID when
// it keeps its decoded messages and its message list equals ranges (the
// row's, as read), or nil.
func (c *Cache) Lookup(threadID, checkpointID string, ranges []byte) *Parent {
	p := c.Get(threadID, checkpointID)
	if p == nil || p.Messages == nil || !bytes.Equal(p.Ranges, ranges) {
		return nil
	}
	return p
}

// Put remembers p as the newest checkpoint of threadID. It takes a new
// p, which nothing else may have seen yet (a p too large to keep its
// messages loses them), or the entry itself (Lookup), which it marks
// used.
func (c *Cache) Put(threadID string, p *Parent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[threadID] != p && cost(p) > CacheBytes/4 {
		p.Messages, p.Bytes = nil, 0
	}
	if c.entries == nil {
		c.entries = map[string]*Parent{}
	}
	if old, ok := c.entries[threadID]; ok && old == p {
		c.touch(threadID)
		return
	} else if ok {
		c.size -= cost(old)
	} else if len(c.entries) >= CacheThreads {
		c.drop(c.order[0])
	}
	c.entries[threadID] = p
	c.size += cost(p)
	c.touch(threadID)
	// The least recently used threads give up their messages: a new
	// Parent without them, since the old one may be in a reader's hands.
	// It shares the old one's slices, so it never extends them in place.
	for i := 0; c.size > CacheBytes && i < len(c.order); i++ {
		old := c.entries[c.order[i]]
		if old.Messages == nil {
			continue
		}
		c.size -= cost(old)
		np := &Parent{CheckpointID: old.CheckpointID, IDs: old.IDs, Hashes: old.Hashes, Ranges: old.Ranges}
		np.extended.Store(true)
		c.entries[c.order[i]] = np
	}
}

// Forget drops the entry of threadID (its thread was deleted, or its
// message rows pruned).
func (c *Cache) Forget(threadID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(threadID)
}

// drop removes the entry of threadID; c.mu is held.
func (c *Cache) drop(threadID string) {
	old, ok := c.entries[threadID]
	if !ok {
		return
	}
	c.size -= cost(old)
	delete(c.entries, threadID)
	for i, id := range c.order {
		if id == threadID {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

// touch moves threadID to the most recently used end; c.mu is held.
func (c *Cache) touch(threadID string) {
	for i, id := range c.order {
		if id == threadID {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	c.order = append(c.order, threadID)
}

// Count records n messages encoded for writing and d decoded from their
// rows by the store that owns c (see Counts).
func (c *Cache) Count(encoded, decoded int) {
	c.encoded.Add(int64(encoded))
	c.decoded.Add(int64(decoded))
}

// Counts returns the messages encoded and decoded so far (Count): the
// tests of a store prove with them that a step's work does not grow with
// the thread.
func (c *Cache) Counts() (encoded, decoded int64) {
	return c.encoded.Load(), c.decoded.Load()
}
