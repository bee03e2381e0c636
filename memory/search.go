package memory

import (
	"context"
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
	var ids []string
	if m.b.RetrievalAdapter == "fts5" {
		if ids, err = m.matchIDs(ctx, userID, d.Facts, query, category, limit); err != nil {
			m.logger.Warn("memory: full-text search failed; substring search", "err", err)
			ids = nil
		}
	}
	facts := d.Facts
	if category != "" {
		facts = slices.DeleteFunc(slices.Clone(facts), func(f Fact) bool { return f.Category != category })
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

// matchIDs ranks a user's facts against query with the user's cached
// FTS5 index (search_index.go; built when the facts changed): any query
// word may match, bm25 orders; category, when set, keeps that category.
func (m *Manager) matchIDs(ctx context.Context, userID string, facts []Fact, query, category string, limit int) ([]string, error) {
	terms := ftsTerms(query)
	if len(terms) == 0 || len(facts) == 0 {
		return nil, nil
	}
	return m.index.match(ctx, userID, facts, strings.Join(terms, " OR "), category, limit)
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
