package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/antlerhq/antler/store"
)

// CreateRun implements store.Store.
func (s *Store) CreateRun(ctx context.Context, r *store.Run) error {
	if r.ID == "" {
		return errors.New("postgres: run id is empty")
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now()
	}
	r.UpdatedAt = r.CreatedAt
	r.Status = cmp.Or(r.Status, store.RunPending)
	meta, err := encodeMeta(r.Metadata)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx,
		`INSERT INTO antler_runs (id, thread_id, user_id, agent_name, status, stop_reason, error, metadata, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		r.ID, r.ThreadID, r.UserID, r.AgentName, r.Status, r.StopReason, r.Error, meta, r.CreatedAt, r.UpdatedAt)
	switch pgCode(err) {
	case uniqueViolation:
		return fmt.Errorf("run %q: %w", r.ID, store.ErrExists)
	case foreignKeyViolation:
		return fmt.Errorf("thread %q: %w", r.ThreadID, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres: create run: %w", err)
	}
	return nil
}

// UpdateRun implements store.Store.
func (s *Store) UpdateRun(ctx context.Context, id string, u store.RunUpdate) error {
	tag, err := s.pool.Exec(ctx,
		`UPDATE antler_runs SET status = $1, stop_reason = $2, error = $3, updated_at = $4 WHERE id = $5`,
		u.Status, u.StopReason, u.Error, now(), id)
	if err != nil {
		return fmt.Errorf("postgres: update run: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	return nil
}

const runCols = `id, thread_id, user_id, agent_name, status, stop_reason, error, metadata, created_at, updated_at`

func scanRun(r pgx.Row) (*store.Run, error) {
	var run store.Run
	var meta []byte
	if err := r.Scan(&run.ID, &run.ThreadID, &run.UserID, &run.AgentName, &run.Status, &run.StopReason, &run.Error,
		&meta, &run.CreatedAt, &run.UpdatedAt); err != nil {
		return nil, err
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return nil, err
	}
	run.Metadata, run.CreatedAt, run.UpdatedAt = m, run.CreatedAt.UTC(), run.UpdatedAt.UTC()
	return &run, nil
}

// GetRun implements store.Store.
func (s *Store) GetRun(ctx context.Context, id string) (*store.Run, error) {
	r, err := scanRun(s.pool.QueryRow(ctx, `SELECT `+runCols+` FROM antler_runs WHERE id = $1`, id))
	if isNoRows(err) {
		return nil, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get run: %w", err)
	}
	return r, nil
}

// ListRuns implements store.Store.
func (s *Store) ListRuns(ctx context.Context, threadID string) ([]*store.Run, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT `+runCols+` FROM antler_runs WHERE thread_id = $1 ORDER BY created_at DESC, seq DESC`, threadID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list runs: %w", err)
	}
	defer rows.Close()
	var out []*store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: list runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list runs: %w", err)
	}
	return out, nil
}
