package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/thread"
)

// ErrLeaseLost is returned by PutCheckpoint for a checkpoint of a run
// whose thread is leased to another run (see Leases): the run's replica
// lost its lease, and its writes are fenced off so that the new holder
// is the only writer.
var ErrLeaseLost = errors.New("postgres: the thread is leased to another run")

// putCheckpoint bumps the thread and appends the checkpoint in one
// statement (one round trip, one implicit transaction). A checkpoint of
// a run is written only while no other run holds the thread's lease.
const putCheckpoint = `WITH t AS (
	UPDATE antler_threads SET updated_at = $8,
		title = CASE WHEN $9 = '' THEN title ELSE $9 END
	WHERE id = $1
	  AND ($4 = '' OR NOT EXISTS (
		SELECT 1 FROM antler_run_leases l WHERE l.thread_id = $1 AND l.run_id <> $4))
	RETURNING id)
INSERT INTO antler_checkpoints (thread_id, id, parent_id, run_id, step, state, metadata, created_at)
SELECT t.id, $2, $3, $4, $5, $6, $7, $8 FROM t`

// PutCheckpoint implements store.Store. It returns ErrLeaseLost (and
// writes nothing) when cp.RunID is set and another run holds the
// thread's lease. After a transient error it is retried; a retry first
// looks for the checkpoint (its id is fixed before the first attempt),
// so that a write that committed is not reported as a duplicate.
func (s *Store) PutCheckpoint(ctx context.Context, cp *store.Checkpoint) error {
	state := cp.State
	if state == nil {
		state = &thread.State{}
	}
	blob, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("postgres: encode state: %w", err)
	}
	meta, err := encodeMeta(cp.Metadata)
	if err != nil {
		return err
	}
	if cp.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("postgres: checkpoint id: %w", err)
		}
		cp.ID = id.String()
	}
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = now()
	}
	err = s.retry.do(ctx, "put checkpoint", func(ctx context.Context, attempt int) error {
		if attempt > 1 {
			// An earlier attempt may have committed before its
			// connection died: then this checkpoint is stored already.
			if done, err := s.checkpointStored(ctx, cp); done || err != nil {
				return err
			}
		}
		return s.putCheckpoint(ctx, cp, blob, meta, state.Title)
	})
	return err
}

// putCheckpoint is one attempt of PutCheckpoint.
func (s *Store) putCheckpoint(ctx context.Context, cp *store.Checkpoint, blob, meta []byte, title string) error {
	tag, err := s.pool.Exec(ctx, putCheckpoint,
		cp.ThreadID, cp.ID, cp.ParentID, cp.RunID, cp.Step, blob, meta, cp.CreatedAt, title)
	if pgCode(err) == uniqueViolation {
		return fmt.Errorf("checkpoint %q: %w", cp.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: put checkpoint: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	// Nothing written: a missing thread, or the lease fence.
	var holder string
	err = s.pool.QueryRow(ctx, `SELECT coalesce((SELECT run_id FROM antler_run_leases WHERE thread_id = $1), '')
		FROM antler_threads WHERE id = $1`, cp.ThreadID).Scan(&holder)
	switch {
	case isNoRows(err):
		return fmt.Errorf("thread %q: %w", cp.ThreadID, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("postgres: put checkpoint: %w", err)
	case holder != "" && holder != cp.RunID:
		return fmt.Errorf("checkpoint of run %s on thread %q (held by run %s): %w", cp.RunID, cp.ThreadID, holder, ErrLeaseLost)
	}
	return fmt.Errorf("postgres: put checkpoint on thread %q: not written", cp.ThreadID)
}

// checkpointStored reports whether checkpoint cp.ID of cp.ThreadID is
// stored: true when it is cp (same parent, run and step), ErrExists when
// it is another checkpoint with that id.
func (s *Store) checkpointStored(ctx context.Context, cp *store.Checkpoint) (bool, error) {
	var parent, run string
	var step int
	err := s.pool.QueryRow(ctx, `SELECT parent_id, run_id, step FROM antler_checkpoints WHERE thread_id = $1 AND id = $2`,
		cp.ThreadID, cp.ID).Scan(&parent, &run, &step)
	switch {
	case isNoRows(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("postgres: put checkpoint: %w", err)
	case parent != cp.ParentID || run != cp.RunID || step != cp.Step:
		return false, fmt.Errorf("checkpoint %q: %w", cp.ID, store.ErrExists)
	}
	return true, nil
}

const checkpointCols = `id, thread_id, parent_id, run_id, step, state, metadata, created_at`

func scanCheckpoint(r pgx.Row) (*store.Checkpoint, error) {
	var cp store.Checkpoint
	var blob, meta []byte
	if err := r.Scan(&cp.ID, &cp.ThreadID, &cp.ParentID, &cp.RunID, &cp.Step, &blob, &meta, &cp.CreatedAt); err != nil {
		return nil, err
	}
	var st thread.State
	if err := json.Unmarshal(blob, &st); err != nil {
		return nil, fmt.Errorf("decode state of checkpoint %s: %w", cp.ID, err)
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return nil, err
	}
	cp.State, cp.Metadata, cp.CreatedAt = &st, m, cp.CreatedAt.UTC()
	return &cp, nil
}

// LatestCheckpoint implements store.Store.
func (s *Store) LatestCheckpoint(ctx context.Context, threadID string) (*store.Checkpoint, error) {
	var cp *store.Checkpoint
	err := s.retry.do(ctx, "latest checkpoint", func(ctx context.Context, _ int) error {
		var err error
		cp, err = scanCheckpoint(s.pool.QueryRow(ctx,
			`SELECT `+checkpointCols+` FROM antler_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1`, threadID))
		return err
	})
	if isNoRows(err) {
		return nil, fmt.Errorf("checkpoint of thread %q: %w", threadID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: latest checkpoint: %w", err)
	}
	return cp, nil
}

// GetCheckpoint implements store.Store.
func (s *Store) GetCheckpoint(ctx context.Context, threadID, id string) (*store.Checkpoint, error) {
	var cp *store.Checkpoint
	err := s.retry.do(ctx, "get checkpoint", func(ctx context.Context, _ int) error {
		var err error
		cp, err = scanCheckpoint(s.pool.QueryRow(ctx,
			`SELECT `+checkpointCols+` FROM antler_checkpoints WHERE thread_id = $1 AND id = $2`, threadID, id))
		return err
	})
	if isNoRows(err) {
		return nil, fmt.Errorf("checkpoint %q of thread %q: %w", id, threadID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get checkpoint: %w", err)
	}
	return cp, nil
}

// ListCheckpoints implements store.Store.
func (s *Store) ListCheckpoints(ctx context.Context, threadID string, limit int, before string) ([]*store.Checkpoint, error) {
	query := `SELECT ` + checkpointCols + ` FROM antler_checkpoints WHERE thread_id = $1`
	args := []any{threadID}
	if before != "" {
		query += ` AND seq < (SELECT seq FROM antler_checkpoints WHERE thread_id = $1 AND id = $2)`
		args = append(args, before)
	}
	query += ` ORDER BY seq DESC`
	if limit > 0 {
		args = append(args, limit)
		query += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	var out []*store.Checkpoint
	err := s.retry.do(ctx, "list checkpoints", func(ctx context.Context, _ int) error {
		rows, err := s.pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Checkpoint, error) { return scanCheckpoint(r) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list checkpoints: %w", err)
	}
	return out, nil
}
