package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	return s.retry.do(ctx, "create thread", func(ctx context.Context, attempt int) error {
		_, err := s.pool.Exec(ctx,
			`INSERT INTO antler_threads (id, user_id, agent_name, status, title, metadata, created_at, updated_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			t.ID, t.UserID, t.AgentName, t.Status, t.Title, meta, t.CreatedAt, t.UpdatedAt)
		if pgCode(err) == uniqueViolation {
			// A retry finds the row an earlier attempt committed: that
			// is this thread (same user and creation time), not another.
			if attempt > 1 && s.threadIs(ctx, t) {
				return nil
			}
			return fmt.Errorf("thread %q: %w", t.ID, store.ErrExists)
		}
		if err != nil {
			return fmt.Errorf("postgres: create thread: %w", err)
		}
		return nil
	})
}

// threadIs reports whether the stored thread t.ID has t's user and
// creation time (false when it cannot tell).
func (s *Store) threadIs(ctx context.Context, t *store.Thread) bool {
	var user string
	var created time.Time
	err := s.pool.QueryRow(ctx, `SELECT user_id, created_at FROM antler_threads WHERE id = $1`, t.ID).Scan(&user, &created)
	return err == nil && user == t.UserID && created.Equal(t.CreatedAt)
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
	var t *store.Thread
	err := s.retry.do(ctx, "get thread", func(ctx context.Context, _ int) error {
		var err error
		t, err = scanThread(s.pool.QueryRow(ctx, `SELECT `+threadCols+` FROM antler_threads WHERE id = $1`, id))
		return err
	})
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
	var tag pgconn.CommandTag
	err = s.retry.do(ctx, "update thread", func(ctx context.Context, _ int) error {
		tag, err = s.pool.Exec(ctx,
			`UPDATE antler_threads SET status = $1, title = $2, metadata = $3, updated_at = $4 WHERE id = $5`,
			cmp.Or(t.Status, store.ThreadIdle), t.Title, meta, t.UpdatedAt, t.ID)
		return err
	})
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
	var out []*store.Thread
	err := s.retry.do(ctx, "search threads", func(ctx context.Context, _ int) error {
		rows, err := s.pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Thread, error) { return scanThread(r) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: search threads: %w", err)
	}
	return out, nil
}

// DeleteThread implements store.Store. Checkpoints, runs, leases and
// stored run events go with the thread (ON DELETE CASCADE). After a
// transient error, a retry that finds the thread gone reports success.
func (s *Store) DeleteThread(ctx context.Context, id string) error {
	return s.retry.do(ctx, "delete thread", func(ctx context.Context, attempt int) error {
		tag, err := s.pool.Exec(ctx, `DELETE FROM antler_threads WHERE id = $1`, id)
		if err != nil {
			return fmt.Errorf("postgres: delete thread: %w", err)
		}
		// A retry that finds nothing to delete may follow an attempt
		// that deleted it: the thread is gone either way.
		s.parents.Forget(id)
		if tag.RowsAffected() == 0 && attempt == 1 {
			return fmt.Errorf("thread %q: %w", id, store.ErrNotFound)
		}
		return nil
	})
}
