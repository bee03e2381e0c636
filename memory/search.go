package memory

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"unicode"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, with FTS5
)

// maxSearchResults bounds one search.
const maxSearchResults = 50

// Search returns up to limit facts of a user matching query, best first:
// full-text search (SQLite FTS5, bm25) when retrieval_adapter is fts5,
// else (or when it finds nothing) case-insensitive substring matching.
// category, when set, keeps facts of that category only.
func (m *Manager) Search(ctx context.Context, userID, query, category string, limit int) ([]Fact, error) {
	if err := m.supported(); err != nil {
		return nil, err
	}
	limit = min(max(limit, 1), maxSearchResults)
	if strings.TrimSpace(query) == "" {
		return []Fact{}, nil
	}
	d, err := m.storage.Load(ctx, userID)
	if err != nil {
		return nil, err
	}
	facts := d.Facts
	if category != "" {
		facts = slices.DeleteFunc(slices.Clone(facts), func(f Fact) bool { return f.Category != category })
	}
	var ids []string
	if m.b.RetrievalAdapter == "fts5" {
		if ids, err = m.matchIDs(ctx, facts, query, limit); err != nil {
			m.logger.Warn("memory: full-text search failed; substring search", "err", err)
			ids = nil
		}
	}
	byID := make(map[string]Fact, len(facts))
	for _, f := range facts {
		byID[f.ID] = f
	}
	out := []Fact{}
	for _, id := range ids {
		out = append(out, byID[id])
	}
	if len(out) == 0 {
		q := strings.ToLower(strings.TrimSpace(query))
		for _, f := range facts {
			if len(out) < limit && strings.Contains(strings.ToLower(f.Content), q) {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// matchIDs ranks facts against query with an FTS5 index built for the
// call in a private in-memory database (a document holds at most 500
// facts); any query word may match, bm25 orders.
func (m *Manager) matchIDs(ctx context.Context, facts []Fact, query string, limit int) ([]string, error) {
	terms := ftsTerms(query)
	if len(terms) == 0 || len(facts) == 0 {
		return nil, nil
	}
	db, err := sql.Open("sqlite", "file::memory:?mode=memory")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE facts USING fts5(id UNINDEXED, content, category, tokenize='unicode61')`); err != nil {
		return nil, fmt.Errorf("fts5: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for _, f := range facts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO facts(id, content, category) VALUES (?, ?, ?)`, f.ID, f.Content, f.Category); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT id FROM facts WHERE facts MATCH ? ORDER BY bm25(facts) LIMIT ?`,
		strings.Join(terms, " OR "), limit)
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

// maxQueryTerms bounds the words of one full-text query.
const maxQueryTerms = 32

// ftsTerms splits query into quoted FTS5 terms (letters and digits only,
// so no query syntax reaches FTS5), at most maxQueryTerms.
func ftsTerms(query string) []string {
	words := strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	var out []string
	seen := map[string]bool{}
	for _, w := range words {
		w = strings.ToLower(w)
		if len([]rune(w)) < 2 || seen[w] || len(out) >= maxQueryTerms {
			continue
		}
		seen[w] = true
		out = append(out, `"`+w+`"`)
	}
	return out
}
