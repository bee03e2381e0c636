package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/antlerhq/antler/store"
)

// CreateRun implements store.Store. The run has no owner: the lease
// sweep never fails it (see CreateRunOwned).
func (s *Store) CreateRun(ctx context.Context, r *store.Run) error {
	return s.CreateRunOwned(ctx, r, "")
}

// CreateRunOwned is CreateRun for a run started under a lease of the
// replica named owner (Leases.Owner): the lease sweep fails such a run
// when it is pending or running without a live lease (the replica let its
// lease go without recording the outcome, or died).
func (s *Store) CreateRunOwned(ctx context.Context, r *store.Run, owner string) error {
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
	usage, err := encodeUsage(r.Usage)
	if err != nil {
		return err
	}
	return s.retry.do(ctx, "create run", func(ctx context.Context, attempt int) error {
		_, err := s.pool.Exec(ctx, createRun,
			r.ID, r.ThreadID, r.UserID, r.AgentName, r.Status, r.StopReason, r.Error, meta, usage, r.CreatedAt, r.UpdatedAt, owner)
		switch pgCode(err) {
		case uniqueViolation:
			// A retry finds the row an earlier attempt committed: that
			// is this run (same thread and creation time), not another.
			if attempt > 1 && s.runIs(ctx, r) {
				return nil
			}
			return fmt.Errorf("run %q: %w", r.ID, store.ErrExists)
		case foreignKeyViolation:
			return fmt.Errorf("thread %q: %w", r.ThreadID, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("postgres: create run: %w", err)
		}
		return nil
	})
}

const createRun = `INSERT INTO antler_runs
	(id, thread_id, user_id, agent_name, status, stop_reason, error, metadata, token_usage, created_at, updated_at, owner)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`

// runIs reports whether the stored run r.ID has r's thread and creation
// time (false when it cannot tell).
func (s *Store) runIs(ctx context.Context, r *store.Run) bool {
	var tid string
	var created time.Time
	err := s.pool.QueryRow(ctx, `SELECT thread_id, created_at FROM antler_runs WHERE id = $1`, r.ID).Scan(&tid, &created)
	return err == nil && tid == r.ThreadID && created.Equal(r.CreatedAt)
}

// UpdateRun implements store.Store.
func (s *Store) UpdateRun(ctx context.Context, id string, u store.RunUpdate) error {
	usage, err := encodeUsage(u.Usage)
	if err != nil {
		return err
	}
	updated := now()
	var tag pgconn.CommandTag
	err = s.retry.do(ctx, "update run", func(ctx context.Context, _ int) error {
		tag, err = s.pool.Exec(ctx,
			`UPDATE antler_runs SET status = $1, stop_reason = $2, error = $3, token_usage = coalesce($4, token_usage), updated_at = $5
			 WHERE id = $6`,
			u.Status, u.StopReason, u.Error, usage, updated, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: update run: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	return nil
}

const runCols = `id, thread_id, user_id, agent_name, status, stop_reason, error, metadata, token_usage, created_at, updated_at`

func scanRun(r pgx.Row) (*store.Run, error) {
	var run store.Run
	var meta, usage []byte
	if err := r.Scan(&run.ID, &run.ThreadID, &run.UserID, &run.AgentName, &run.Status, &run.StopReason, &run.Error,
		&meta, &usage, &run.CreatedAt, &run.UpdatedAt); err != nil {
		return nil, err
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return nil, err
	}
	if usage != nil {
		run.Usage = new(store.RunUsage)
		if err := json.Unmarshal(usage, run.Usage); err != nil {
			return nil, fmt.Errorf("postgres: decode usage of run %s: %w", run.ID, err)
		}
	}
	run.Metadata, run.CreatedAt, run.UpdatedAt = m, run.CreatedAt.UTC(), run.UpdatedAt.UTC()
	return &run, nil
}

// encodeUsage is the token_usage column of u: NULL for nil.
func encodeUsage(u *store.RunUsage) ([]byte, error) {
	if u == nil {
		return nil, nil
	}
	b, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("postgres: encode usage: %w", err)
	}
	return b, nil
}

// GetRun implements store.Store.
func (s *Store) GetRun(ctx context.Context, id string) (*store.Run, error) {
	var r *store.Run
	err := s.retry.do(ctx, "get run", func(ctx context.Context, _ int) error {
		var err error
		r, err = scanRun(s.pool.QueryRow(ctx, `SELECT `+runCols+` FROM antler_runs WHERE id = $1`, id))
		return err
	})
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
	var out []*store.Run
	err := s.retry.do(ctx, "list runs", func(ctx context.Context, _ int) error {
		rows, err := s.pool.Query(ctx,
			`SELECT `+runCols+` FROM antler_runs WHERE thread_id = $1 ORDER BY created_at DESC, seq DESC`, threadID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Run, error) { return scanRun(r) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list runs: %w", err)
	}
	return out, nil
}
