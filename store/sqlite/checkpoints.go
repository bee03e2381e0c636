package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/cpmsg"
	"github.com/antlerhq/antler/thread"
)

// PutCheckpoint implements store.Store. It writes the state's new
// messages (those not in the parent checkpoint) as message rows and a
// checkpoint row that refers to all of them, in one transaction; every
// store.PruneEvery steps the same transaction enforces the retention
// policy.
func (s *Store) PutCheckpoint(ctx context.Context, cp *store.Checkpoint) error {
	meta, err := encodeMeta(cp.Metadata)
	if err != nil {
		return err
	}
	if err := fillCheckpointIdentity(cp); err != nil {
		return err
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: put checkpoint: %w", err)
	}
	defer tx.Rollback()
	parent, legacyParent, err := s.parentOf(ctx, tx, cp)
	if err != nil {
		return fmt.Errorf("sqlite: put checkpoint: %w", err)
	}
	plan, err := cpmsg.NewPlan(cp.State, parent, cp.KeptMessages)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	s.parents.Count(len(plan.Refs), 0)
	title := ""
	if cp.State != nil {
		title = cp.State.Title
	}
	res, err := tx.StmtContext(ctx, s.touchThread).ExecContext(ctx, toNanos(cp.CreatedAt), title, title, cp.ThreadID)
	if err != nil {
		return fmt.Errorf("sqlite: put checkpoint: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("thread %q: %w", cp.ThreadID, store.ErrNotFound)
	}
	if err := s.insertNewMessages(ctx, tx, cp.ThreadID, plan); err != nil {
		return err
	}
	ranges, err := plan.Ranges()
	if err != nil {
		return fmt.Errorf("sqlite: put checkpoint: %w", err)
	}
	_, err = tx.StmtContext(ctx, s.insertCheckpoint).ExecContext(ctx,
		cp.ThreadID, cp.ID, cp.ParentID, cp.RunID, cp.Step, plan.State, meta, toNanos(cp.CreatedAt), ranges)
	if err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("checkpoint %q: %w", cp.ID, store.ErrExists)
		}
		return fmt.Errorf("sqlite: put checkpoint: %w", err)
	}
	if plan.Drops && !legacyParent {
		// The parent holds messages this checkpoint lacks: retention
		// keeps it.
		if _, err := tx.ExecContext(ctx, `UPDATE checkpoints SET pinned = 1 WHERE thread_id = ? AND id = ?`,
			cp.ThreadID, cp.ParentID); err != nil {
			return fmt.Errorf("sqlite: put checkpoint: %w", err)
		}
	}
	if s.retention.Prunes(cp.Step) {
		if err := s.prune(ctx, tx, cp.ThreadID); err != nil {
			return fmt.Errorf("sqlite: checkpoint retention: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: put checkpoint: %w", err)
	}
	s.parents.Put(cp.ThreadID, plan.Parent(cp.ID, ranges))
	return nil
}

// fillCheckpointIdentity sets cp's ID (a UUIDv7) and CreatedAt when they
// are empty.
func fillCheckpointIdentity(cp *store.Checkpoint) error {
	if cp.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("sqlite: checkpoint id: %w", err)
		}
		cp.ID = id.String()
	}
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = now()
	}
	return nil
}

// insertNewMessages writes the plan's new messages as message rows of the
// thread and records their row ids in the plan.
func (s *Store) insertNewMessages(ctx context.Context, tx *sql.Tx, threadID string, plan *cpmsg.Plan) error {
	insMsg := tx.StmtContext(ctx, s.insertMessage)
	for _, i := range plan.New {
		res, err := insMsg.ExecContext(ctx, threadID, plan.Refs[i].Body)
		if err != nil {
			return fmt.Errorf("sqlite: put checkpoint: message: %w", err)
		}
		if plan.Refs[i].ID, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("sqlite: put checkpoint: message: %w", err)
		}
	}
	return nil
}

// parentOf returns the message rows of cp's parent checkpoint: nil when
// it has none, or its parent is gone or was written before schema 4
// (legacy true: its messages have no rows).
func (s *Store) parentOf(ctx context.Context, tx *sql.Tx, cp *store.Checkpoint) (p *cpmsg.Parent, legacy bool, err error) {
	if cp.ParentID == "" {
		return nil, false, nil
	}
	err = tx.StmtContext(ctx, s.parentRow).QueryRowContext(ctx, cp.ThreadID, cp.ParentID).Scan(&legacy)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil || legacy:
		return nil, legacy, err
	}
	if p := s.parents.Get(cp.ThreadID, cp.ParentID); p != nil {
		return p, false, nil
	}
	rows, err := s.readCheckpoints(ctx, tx, true, `SELECT `+checkpointCols+` FROM checkpoints WHERE thread_id = ? AND id = ?`,
		cp.ThreadID, cp.ParentID)
	if err != nil || len(rows) == 0 {
		return nil, false, err
	}
	return rows[0].parent, false, nil
}

// prune enforces the retention policy on a thread (see store.Retention).
func (s *Store) prune(ctx context.Context, tx *sql.Tx, threadID string) error {
	var cutoff int64
	err := tx.QueryRowContext(ctx, `SELECT seq FROM checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?`,
		threadID, s.retention.Keep()-1).Scan(&cutoff)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM checkpoints WHERE thread_id = ? AND seq < ? AND messages IS NOT NULL AND pinned = 0`,
		threadID, cutoff)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT messages FROM checkpoints WHERE thread_id = ? AND messages IS NOT NULL`, threadID)
	if err != nil {
		return err
	}
	var lists [][]int64
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			rows.Close()
			return err
		}
		ids, err := cpmsg.DecodeRanges(b)
		if err != nil {
			rows.Close()
			return err
		}
		lists = append(lists, ids)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	keep := cpmsg.Intervals(lists)
	if len(keep) == 0 {
		return nil
	}
	// The message rows below the first kept one and between kept ones
	// (never above the last: none is unreferenced there).
	if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoint_messages WHERE thread_id = ? AND id < ?`, threadID, keep[0][0]); err != nil {
		return err
	}
	for i := 1; i < len(keep); i++ {
		if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoint_messages WHERE thread_id = ? AND id > ? AND id < ?`,
			threadID, keep[i-1][1], keep[i][0]); err != nil {
			return err
		}
	}
	return nil
}

const checkpointCols = `id, thread_id, parent_id, run_id, step, state, metadata, created_at, messages`

// row is a checkpoint read with the message rows of its state.
type row struct {
	cp     *store.Checkpoint
	parent *cpmsg.Parent // nil for a row of before schema 4
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// rawRow is a checkpoint row before its messages are read.
type rawRow struct {
	cp     *store.Checkpoint
	state  []byte
	ranges []byte
	ids    []int64
	delta  bool          // the messages are rows of their own
	cached *cpmsg.Parent // the cache's decoded messages of the checkpoint
}

// scanRow reads one row of checkpointCols.
func scanRow(rows *sql.Rows) (rawRow, error) {
	var r rawRow
	var cp store.Checkpoint
	var meta string
	var created int64
	var msgs sql.NullString
	if err := rows.Scan(&cp.ID, &cp.ThreadID, &cp.ParentID, &cp.RunID, &cp.Step, &r.state, &meta, &created, &msgs); err != nil {
		return r, err
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return r, err
	}
	cp.Metadata, cp.CreatedAt = m, fromNanos(created)
	r.cp = &cp
	if msgs.Valid {
		r.delta, r.ranges = true, []byte(msgs.String)
	}
	return r, nil
}

// readCheckpoints runs a checkpoint query and reads the message rows of
// the checkpoints it returns (with one query over their id span), in the
// transaction q, so that retention cannot delete them in between. A
// checkpoint whose decoded messages the cache keeps (the newest one of a
// thread, written or read before) reads none. With parents each row also
// gets its Parent.
func (s *Store) readCheckpoints(ctx context.Context, q querier, parents bool, query string, args ...any) ([]row, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var raws []rawRow
	var lo, hi int64
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		if r.delta {
			r.cached = s.parents.Lookup(r.cp.ThreadID, r.cp.ID, r.ranges)
		}
		if r.delta && r.cached == nil {
			if r.ids, err = cpmsg.DecodeRanges(r.ranges); err != nil {
				rows.Close()
				return nil, fmt.Errorf("checkpoint %s: %w", r.cp.ID, err)
			}
			if l, h := cpmsg.Span(r.ids); len(r.ids) > 0 {
				if lo == 0 || l < lo {
					lo = l
				}
				hi = max(hi, h)
			}
		}
		raws = append(raws, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	var bodies map[int64][]byte
	if hi > 0 {
		if bodies, err = readMessages(ctx, q, raws[0].cp.ThreadID, lo, hi); err != nil {
			return nil, err
		}
	}
	return s.assemble(raws, bodies, parents)
}

// assemble rebuilds the states of raws from their rows, the cache and
// the message bodies read.
func (s *Store) assemble(raws []rawRow, bodies map[int64][]byte, parents bool) ([]row, error) {
	out := make([]row, len(raws))
	for i, r := range raws {
		out[i].cp = r.cp
		switch {
		case !r.delta:
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

// readMessages returns the bodies of a thread's message rows lo..hi.
func readMessages(ctx context.Context, q querier, threadID string, lo, hi int64) (map[int64][]byte, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, body FROM checkpoint_messages WHERE thread_id = ? AND id BETWEEN ? AND ?`,
		threadID, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	bodies := map[int64][]byte{}
	for rows.Next() {
		var id int64
		var body []byte
		if err := rows.Scan(&id, &body); err != nil {
			return nil, err
		}
		bodies[id] = body
	}
	return bodies, rows.Err()
}

// read runs a checkpoint query in a read transaction (one snapshot of the
// database for the rows and their messages).
func (s *Store) read(ctx context.Context, parents bool, query string, args ...any) ([]row, error) {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := s.readCheckpoints(ctx, tx, parents, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, tx.Commit()
}

// LatestCheckpoint implements store.Store. It remembers the checkpoint's
// message rows, so that the next write on the thread (a run continues
// from its latest checkpoint) does not read them again.
func (s *Store) LatestCheckpoint(ctx context.Context, threadID string) (*store.Checkpoint, error) {
	rows, err := s.read(ctx, true, `SELECT `+checkpointCols+` FROM checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT 1`, threadID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: latest checkpoint: %w", err)
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
	rows, err := s.read(ctx, false, `SELECT `+checkpointCols+` FROM checkpoints WHERE thread_id = ? AND id = ?`, threadID, id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: get checkpoint: %w", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("checkpoint %q of thread %q: %w", id, threadID, store.ErrNotFound)
	}
	return rows[0].cp, nil
}

// ListCheckpoints implements store.Store.
func (s *Store) ListCheckpoints(ctx context.Context, threadID string, limit int, before string) ([]*store.Checkpoint, error) {
	query := `SELECT ` + checkpointCols + ` FROM checkpoints WHERE thread_id = ?`
	args := []any{threadID}
	if before != "" {
		query += ` AND seq < (SELECT seq FROM checkpoints WHERE thread_id = ? AND id = ?)`
		args = append(args, threadID, before)
	}
	query += ` ORDER BY seq DESC`
	if limit > 0 {
		query += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.read(ctx, false, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list checkpoints: %w", err)
	}
	out := make([]*store.Checkpoint, len(rows))
	for i, r := range rows {
		out[i] = r.cp
	}
	return out, nil
}
