package config

import (
	"os"
	"sync"
	"time"
)

// ExtensionsCache serves the current extensions_config.json, re-reading it
// cheaply: every Get stats the file and, unless the stat (size,
// modification and change times, device and inode) is the one of the
// content last read and that content had settled (see settleTime), reads
// and hashes it, parsing it only when its Signature changed. A run checks
// the file several times (its tools, its subagents' tools, keyword
// routing), so the stat saves each check the read and the hash. A deleted
// file keeps the last good value. It is safe for concurrent use.
type ExtensionsCache struct {
	path      string                      // immutable after New
	lookupEnv func(string) (string, bool) // immutable after New

	mu     sync.Mutex
	sig    Signature   // guarded by mu: signature of the last parsed content
	loaded bool        // guarded by mu: sig is set
	last   *Extensions // guarded by mu: last successfully parsed value
	err    error       // guarded by mu: parse error of the content at sig
	parses int         // guarded by mu
	reads  int         // guarded by mu: reads and hashes of the file
	// stamp is the stat taken before the content at sig was read, at
	// readAt; stamped is false when there is none.
	stamp   fileStamp        // guarded by mu
	stamped bool             // guarded by mu
	readAt  time.Time        // guarded by mu
	now     func() time.Time // immutable after New; a test's clock
}

// NewExtensionsCache returns a cache for the file at path, resolving $VAR
// values from the process environment. An empty path always yields an
// empty configuration.
func NewExtensionsCache(path string) *ExtensionsCache {
	return &ExtensionsCache{path: path, lookupEnv: os.LookupEnv, now: time.Now}
}

// Path returns the path the cache reads.
func (c *ExtensionsCache) Path() string { return c.path }

// Get returns the current extensions config. changed is true when this
// call parsed new content successfully (the first successful load counts).
//
// A file that was loaded once and is now missing keeps the last good value
// without error. A file that now fails to parse returns the last good value
// (nil if none) with the error; the same broken content is not parsed again.
// A file that has never existed is an error, as for LoadExtensions.
func (c *ExtensionsCache) Get() (ext *Extensions, changed bool, err error) {
	if c.path == "" {
		return emptyExtensions(), false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	stamp, stamped := stampOf(c.path)
	if c.loaded && c.stamped && stamped && stamp == c.stamp && stamp.settled(c.readAt) {
		return c.last, false, c.err
	}
	readAt := c.now()
	c.reads++
	sig, data, err := readSignature(c.path)
	if err != nil {
		return c.last, false, &Error{File: c.path, Msg: "cannot read extensions config: " + errMsg(err), Err: err}
	}
	if sig.Missing {
		if c.last != nil {
			return c.last, false, nil
		}
		_, err := LoadExtensions(c.path) // for the standard not-found error
		return nil, false, err
	}
	c.stamp, c.stamped, c.readAt = stamp, stamped, readAt
	if c.loaded && sig.Equal(c.sig) {
		return c.last, false, c.err
	}
	c.parses++
	c.sig, c.loaded = sig, true
	e, perr := ParseExtensions(c.path, data, c.lookupEnv)
	if perr != nil {
		c.err = perr
		return c.last, false, perr
	}
	e.Path = sig.Path
	c.last, c.err = e, nil
	return e, true, nil
}

// Signature returns the signature of the content last parsed.
func (c *ExtensionsCache) Signature() Signature {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sig
}

// Parses returns how many times the file was parsed, for tests and metrics.
func (c *ExtensionsCache) Parses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.parses
}

// Reads returns how many times the file was read and hashed, for tests
// and metrics.
func (c *ExtensionsCache) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// Reset forgets the cached value so that the next Get parses again.
func (c *ExtensionsCache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sig, c.loaded, c.last, c.err = Signature{}, false, nil, nil
	c.stamped = false
}
