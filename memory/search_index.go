package memory

import (
	"container/list"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
)

// DefaultSearchCacheUsers is the number of users whose full-text index
// is kept when Options.SearchCacheUsers is 0.
const DefaultSearchCacheUsers = 32

// ftsIndex is the full-text index of one user's facts: a private
// in-memory SQLite database with one FTS5 table, built from the facts
// whose fingerprint it records.
type ftsIndex struct {
	user string
	sum  uint64
	db   *sql.DB
}

// ftsCache keeps the full-text indexes of the most recently searched
// users, at most max, so that a search or a prompt of a user whose facts
// did not change queries the index it has instead of building one. An
// index is rebuilt when the document's facts differ from those it was
// built from (fingerprint of every fact's id, content and category),
// whoever changed them: this process, another one, a hand edit. The
// least recently used index is closed when a new user's would exceed
// max. One lock serialises the builds and queries of every user (a
// query of a warm index takes tens of microseconds; a build of 500
// facts a few milliseconds).
type ftsCache struct {
	max int

	mu     sync.Mutex
	lru    *list.List // of *ftsIndex, most recent first
	byUser map[string]*list.Element
	closed bool
	// builds counts the indexes built (tests and the benchmark).
	builds int
}

func newFTSCache(maxUsers int) *ftsCache {
	if maxUsers <= 0 {
		maxUsers = DefaultSearchCacheUsers
	}
	return &ftsCache{max: maxUsers, lru: list.New(), byUser: map[string]*list.Element{}}
}

// errCacheClosed is a search after Manager.Close.
var errCacheClosed = errors.New("memory: the search index is closed")

// match ranks the user's facts against the FTS5 query q (already
// escaped, see ftsTerms) with bm25, best first, at most limit ids;
// category, when set, keeps that category's facts only.
func (c *ftsCache) match(ctx context.Context, user string, facts []Fact, q, category string, limit int) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errCacheClosed
	}
	ix, err := c.index(ctx, user, facts)
	if err != nil {
		return nil, err
	}
	ids, err := ix.query(ctx, q, category, limit)
	if err != nil {
		// A broken index (its connection lost) is built anew next time.
		c.drop(user)
	}
	return ids, err
}

// index returns the user's index for facts, building it when there is
// none or its facts changed; it is the most recently used afterwards.
func (c *ftsCache) index(ctx context.Context, user string, facts []Fact) (*ftsIndex, error) {
	sum := fingerprint(facts)
	if el, ok := c.byUser[user]; ok {
		ix := el.Value.(*ftsIndex)
		if ix.sum == sum {
			c.lru.MoveToFront(el)
			return ix, nil
		}
		c.drop(user)
	}
	ix, err := buildIndex(ctx, user, sum, facts)
	if err != nil {
		return nil, err
	}
	c.builds++
	c.byUser[user] = c.lru.PushFront(ix)
	for c.lru.Len() > c.max {
		c.drop(c.lru.Back().Value.(*ftsIndex).user)
	}
	return ix, nil
}

// drop closes and forgets the user's index, if any.
func (c *ftsCache) drop(user string) {
	if el, ok := c.byUser[user]; ok {
		c.lru.Remove(el)
		delete(c.byUser, user)
		_ = el.Value.(*ftsIndex).db.Close()
	}
}

// stats returns the users whose index is kept, most recent first, and
// the number of indexes built so far (tests).
func (c *ftsCache) stats() (users []string, builds int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; el = el.Next() {
		users = append(users, el.Value.(*ftsIndex).user)
	}
	return users, c.builds
}

// close closes every index; match fails afterwards.
func (c *ftsCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.lru.Len() > 0 {
		c.drop(c.lru.Front().Value.(*ftsIndex).user)
	}
	c.closed = true
}

// fingerprint identifies the indexed fields of facts, in order.
func fingerprint(facts []Fact) uint64 {
	h := fnv.New64a()
	for _, f := range facts {
		for _, s := range []string{f.ID, f.Content, f.Category} {
			_, _ = h.Write([]byte(s))
			_, _ = h.Write([]byte{0})
		}
		_, _ = h.Write([]byte{1})
	}
	return h.Sum64()
}

// buildIndex creates an index of facts in a new in-memory database. The
// database lives in its one connection, which is never closed while the
// index is kept (no idle timeout, no lifetime).
func buildIndex(ctx context.Context, user string, sum uint64, facts []Fact) (ix *ftsIndex, err error) {
	db, err := sql.Open("sqlite", "file::memory:?mode=memory")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = db.Close()
		}
	}()
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE facts USING fts5(id UNINDEXED, content, category UNINDEXED, tokenize='unicode61')`); err != nil {
		return nil, fmt.Errorf("fts5: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO facts(id, content, category) VALUES (?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	defer ins.Close()
	for _, f := range facts {
		if _, err := ins.ExecContext(ctx, f.ID, f.Content, f.Category); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return &ftsIndex{user: user, sum: sum, db: db}, nil
}

// query runs one bm25-ranked match.
func (ix *ftsIndex) query(ctx context.Context, q, category string, limit int) ([]string, error) {
	stmt := `SELECT id FROM facts WHERE facts MATCH ? ORDER BY bm25(facts) LIMIT ?`
	args := []any{q, limit}
	if category != "" {
		stmt = strings.Replace(stmt, "MATCH ?", "MATCH ? AND category = ?", 1)
		args = []any{q, category, limit}
	}
	rows, err := ix.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
