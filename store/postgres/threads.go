package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/antlerhq/antler/store"
)

// CreateThread implements store.Store.
func (s *Store) CreateThread(ctx context.Context, t *store.Thread) error {
	if t.ID == "" {
		return errors.New("postgres: thread id is empty")
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now()
	}
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = t.CreatedAt
	}
	t.Status = cmp.Or(t.Status, store.ThreadIdle)
	meta, err := encodeMeta(t.Metadata)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx,
		`INSERT INTO antler_threads (id, user_id, agent_name, status, title, metadata, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		t.ID, t.UserID, t.AgentName, t.Status, t.Title, meta, t.CreatedAt, t.UpdatedAt)
	if pgCode(err) == uniqueViolation {
		return fmt.Errorf("thread %q: %w", t.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: create thread: %w", err)
	}
	return nil
}

const threadCols = `id, user_id, agent_name, status, title, metadata, created_at, updated_at`

func scanThread(r pgx.Row) (*store.Thread, error) {
	var t store.Thread
	var meta []byte
	if err := r.Scan(&t.ID, &t.UserID, &t.AgentName, &t.Status, &t.Title, &meta, &t.CreatedAt, &t.UpdatedAt); err != nil {
		return nil, err
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return nil, err
	}
	t.Metadata, t.CreatedAt, t.UpdatedAt = m, t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	return &t, nil
}

// GetThread implements store.Store.
func (s *Store) GetThread(ctx context.Context, id string) (*store.Thread, error) {
	t, err := scanThread(s.pool.QueryRow(ctx, `SELECT `+threadCols+` FROM antler_threads WHERE id = $1`, id))
	if isNoRows(err) {
		return nil, fmt.Errorf("thread %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get thread: %w", err)
	}
	return t, nil
}

// UpdateThread implements store.Store.
func (s *Store) UpdateThread(ctx context.Context, t *store.Thread) error {
	meta, err := encodeMeta(t.Metadata)
	if err != nil {
		return err
	}
	t.UpdatedAt = now()
	tag, err := s.pool.Exec(ctx,
		`UPDATE antler_threads SET status = $1, title = $2, metadata = $3, updated_at = $4 WHERE id = $5`,
		cmp.Or(t.Status, store.ThreadIdle), t.Title, meta, t.UpdatedAt, t.ID)
	if err != nil {
		return fmt.Errorf("postgres: update thread: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("thread %q: %w", t.ID, store.ErrNotFound)
	}
	return nil
}

// SearchThreads implements store.Store. A metadata filter compares the
// key's JSONB value for equality (not containment), as the SQLite store.
func (s *Store) SearchThreads(ctx context.Context, q store.ThreadQuery) ([]*store.Thread, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.UserID != "" {
		where = append(where, "user_id = "+arg(q.UserID))
	}
	if q.Status != "" {
		where = append(where, "status = "+arg(q.Status))
	}
	for k, v := range q.Metadata {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("postgres: metadata filter %q: %w", k, err)
		}
		where = append(where, "metadata -> "+arg(k)+" = "+arg(string(b))+"::jsonb")
	}
	query := `SELECT ` + threadCols + ` FROM antler_threads`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY updated_at DESC, id LIMIT " + arg(cmp.Or(q.Limit, 100)) + " OFFSET " + arg(max(q.Offset, 0))
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: search threads: %w", err)
	}
	defer rows.Close()
	var out []*store.Thread
	for rows.Next() {
		t, err := scanThread(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: search threads: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: search threads: %w", err)
	}
	return out, nil
}

// DeleteThread implements store.Store. Checkpoints, runs, leases and
// stored run events go with the thread (ON DELETE CASCADE).
func (s *Store) DeleteThread(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM antler_threads WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("postgres: delete thread: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("thread %q: %w", id, store.ErrNotFound)
	}
	return nil
}
