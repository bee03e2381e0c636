package cpmsg

import (
	"sync"
)

// CacheThreads is how many threads a Cache remembers; with 1,000
// messages a thread's entry is about 32 KB.
const CacheThreads = 128

// Cache remembers the Parent of each thread's most recently written or
// read checkpoint, for the CacheThreads most recently used threads. A
// Parent is immutable once stored (checkpoint ids are never reused), so
// an entry is never stale; a write whose parent is not the entry's
// checkpoint reads its parent instead. The zero value is ready to use and
// safe for concurrent use.
type Cache struct {
	mu      sync.Mutex         // guards the fields below
	entries map[string]*Parent // by thread id
	order   []string           // thread ids, least recently used first
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

// Put remembers p as the newest checkpoint of threadID.
func (c *Cache) Put(threadID string, p *Parent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*Parent{}
	}
	if _, ok := c.entries[threadID]; !ok && len(c.entries) >= CacheThreads {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	c.entries[threadID] = p
	c.touch(threadID)
}

// Forget drops the entry of threadID (its thread was deleted, or its
// message rows pruned).
func (c *Cache) Forget(threadID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[threadID]; !ok {
		return
	}
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
