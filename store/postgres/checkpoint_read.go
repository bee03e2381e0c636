package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/cpmsg"
	"github.com/antlerhq/antler/thread"
)

const checkpointCols = `id, thread_id, parent_id, run_id, step, state, metadata, created_at, messages`

// row is a checkpoint read with the message rows of its state.
type row struct {
	cp     *store.Checkpoint
	parent *cpmsg.Parent // nil for a row of before schema 5, or when not asked for
}

// rawRow is a checkpoint row before its messages are read.
type rawRow struct {
	cp     *store.Checkpoint
	state  []byte
	ranges []byte
	ids    []int64
	split  bool          // the messages are rows of their own
	cached *cpmsg.Parent // the cache's decoded messages of the checkpoint
}

// readCheckpoints runs a checkpoint query and reads the message rows of
// the checkpoints it returns (one query over their id span), in one
// repeatable-read transaction, so that retention cannot delete them in
// between. A checkpoint whose decoded messages the cache keeps (the
// newest one of a thread that this replica wrote or read, unless another
// replica wrote a newer one since) reads none. With parents each row also
// gets its Parent.
func (s *Store) readCheckpoints(ctx context.Context, parents bool, query string, args ...any) ([]row, error) {
	var out []row
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		raws, err := pgx.CollectRows(rows, scanRaw)
		if err != nil {
			return err
		}
		var lo, hi int64
		for i, r := range raws {
			if r.split {
				raws[i].cached = s.parents.Lookup(r.cp.ThreadID, r.cp.ID, r.ranges)
			}
			if raws[i].cached != nil {
				continue
			}
			if r.split {
				var err error
				if raws[i].ids, err = cpmsg.DecodeRanges(r.ranges); err != nil {
					return fmt.Errorf("checkpoint %s: %w", r.cp.ID, err)
				}
				r.ids = raws[i].ids
			}
			if l, h := cpmsg.Span(r.ids); h > 0 {
				if lo == 0 || l < lo {
					lo = l
				}
				hi = max(hi, h)
			}
		}
		bodies := map[int64][]byte{}
		if hi > 0 {
			rows, err := tx.Query(ctx, `SELECT id, body FROM antler_checkpoint_messages WHERE thread_id = $1 AND id BETWEEN $2 AND $3`,
				raws[0].cp.ThreadID, lo, hi)
			if err != nil {
				return err
			}
			var id int64
			var body []byte
			if _, err := pgx.ForEachRow(rows, []any{&id, &body}, func() error {
				bodies[id] = body
				body = nil
				return nil
			}); err != nil {
				return err
			}
		}
		out, err = s.assemble(raws, bodies, parents)
		return err
	})
	return out, err
}

func scanRaw(r pgx.CollectableRow) (rawRow, error) {
	var cp store.Checkpoint
	var raw rawRow
	var meta, msgs []byte
	if err := r.Scan(&cp.ID, &cp.ThreadID, &cp.ParentID, &cp.RunID, &cp.Step, &raw.state, &meta, &cp.CreatedAt, &msgs); err != nil {
		return raw, err
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return raw, err
	}
	cp.Metadata, cp.CreatedAt = m, cp.CreatedAt.UTC()
	raw.cp = &cp
	raw.split, raw.ranges = msgs != nil, msgs
	return raw, nil
}

func (s *Store) assemble(raws []rawRow, bodies map[int64][]byte, parents bool) ([]row, error) {
	out := make([]row, len(raws))
	for i, r := range raws {
		out[i].cp = r.cp
		switch {
		case !r.split:
			var st thread.State
			if err := json.Unmarshal(r.state, &st); err != nil {
				return nil, fmt.Errorf("decode state of checkpoint %s: %w", r.cp.ID, err)
			}
			r.cp.State = &st
		case r.cached != nil:
			st, err := cpmsg.Reuse(r.state, r.cached)
			if err != nil {
				return nil, err
			}
			r.cp.State = st
			if parents {
				out[i].parent = r.cached
			}
		default:
			st, parent, err := cpmsg.Assemble(r.cp.ID, r.state, r.ranges, r.ids, bodies, parents)
			if err != nil {
				return nil, err
			}
			s.parents.Count(0, len(r.ids))
			r.cp.State, out[i].parent = st, parent
		}
	}
	return out, nil
}

// LatestCheckpoint implements store.Store. It remembers the checkpoint's
// message rows, so that the next write on the thread (a run continues
// from its latest checkpoint) does not read them again.
func (s *Store) LatestCheckpoint(ctx context.Context, threadID string) (*store.Checkpoint, error) {
	var rows []row
	err := s.retry.do(ctx, "latest checkpoint", func(ctx context.Context, _ int) error {
		var err error
		rows, err = s.readCheckpoints(ctx, true,
			`SELECT `+checkpointCols+` FROM antler_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1`, threadID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: latest checkpoint: %w", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("checkpoint of thread %q: %w", threadID, store.ErrNotFound)
	}
	if rows[0].parent != nil {
		s.parents.Put(threadID, rows[0].parent)
	}
	return rows[0].cp, nil
}

// GetCheckpoint implements store.Store.
func (s *Store) GetCheckpoint(ctx context.Context, threadID, id string) (*store.Checkpoint, error) {
	var rows []row
	err := s.retry.do(ctx, "get checkpoint", func(ctx context.Context, _ int) error {
		var err error
		rows, err = s.readCheckpoints(ctx, false,
			`SELECT `+checkpointCols+` FROM antler_checkpoints WHERE thread_id = $1 AND id = $2`, threadID, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: get checkpoint: %w", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("checkpoint %q of thread %q: %w", id, threadID, store.ErrNotFound)
	}
	return rows[0].cp, nil
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
	var rows []row
	err := s.retry.do(ctx, "list checkpoints", func(ctx context.Context, _ int) error {
		var err error
		rows, err = s.readCheckpoints(ctx, false, query, args...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list checkpoints: %w", err)
	}
	out := make([]*store.Checkpoint, len(rows))
	for i, r := range rows {
		out[i] = r.cp
	}
	return out, nil
}

// prune enforces the retention policy on a thread (see store.Retention)
// in one transaction. The message rows above the last one a kept
// checkpoint refers to are never deleted: a write committing meanwhile
// may refer to them.
func (s *Store) prune(ctx context.Context, threadID string) error {
	return s.retry.do(ctx, "checkpoint retention", func(ctx context.Context, _ int) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var cutoff int64
			err := tx.QueryRow(ctx, `SELECT seq FROM antler_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2`,
				threadID, s.retention.Keep()-1).Scan(&cutoff)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `DELETE FROM antler_checkpoints WHERE thread_id = $1 AND seq < $2 AND messages IS NOT NULL AND NOT pinned`,
				threadID, cutoff)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			rows, err := tx.Query(ctx, `SELECT messages::text FROM antler_checkpoints WHERE thread_id = $1 AND messages IS NOT NULL`, threadID)
			if err != nil {
				return err
			}
			lists, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]int64, error) {
				var b []byte
				if err := r.Scan(&b); err != nil {
					return nil, err
				}
				return cpmsg.DecodeRanges(b)
			})
			if err != nil {
				return err
			}
			keep := cpmsg.Intervals(lists)
			if len(keep) == 0 {
				return nil
			}
			if _, err := tx.Exec(ctx, `DELETE FROM antler_checkpoint_messages WHERE thread_id = $1 AND id < $2`, threadID, keep[0][0]); err != nil {
				return err
			}
			for i := 1; i < len(keep); i++ {
				if _, err := tx.Exec(ctx, `DELETE FROM antler_checkpoint_messages WHERE thread_id = $1 AND id > $2 AND id < $3`,
					threadID, keep[i-1][1], keep[i][0]); err != nil {
					return err
				}
			}
			return nil
		})
	})
}
