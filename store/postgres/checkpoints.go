package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/cpmsg"
)

// ErrLeaseLost is returned by PutCheckpoint for a checkpoint of a run
// whose thread is leased to another run (see Leases): the run's replica
// lost its lease, and its writes are fenced off so that the new holder
// is the only writer.
var ErrLeaseLost = errors.New("postgres: the thread is leased to another run")

// putCheckpoint bumps the thread, writes the new message rows and
// appends the checkpoint in one statement (one round trip, one implicit
// transaction). A checkpoint of a run is written only while no other run
// holds the thread's lease, and one that reuses message rows of its
// parent ($12) only while that parent exists (retention may have deleted
// it since). A parent holding messages the checkpoint lacks ($11) is
// pinned: retention keeps it.
const putCheckpoint = `WITH t AS (
	UPDATE antler_threads SET updated_at = $8,
		title = CASE WHEN $9 = '' THEN title ELSE $9 END
	WHERE id = $1
	  AND ($4 = '' OR NOT EXISTS (
		SELECT 1 FROM antler_run_leases l WHERE l.thread_id = $1 AND l.run_id <> $4))
	  AND ($12 = '' OR EXISTS (
		SELECT 1 FROM antler_checkpoints p WHERE p.thread_id = $1 AND p.id = $12))
	RETURNING id),
m AS (
	INSERT INTO antler_checkpoint_messages (id, thread_id, body)
	SELECT u.id, t.id, u.body::json FROM t, unnest($13::bigint[], $14::text[]) AS u(id, body)),
k AS (
	UPDATE antler_checkpoints SET pinned = true
	WHERE $11 AND thread_id = $1 AND id = $3 AND EXISTS (SELECT 1 FROM t))
INSERT INTO antler_checkpoints (thread_id, id, parent_id, run_id, step, state, metadata, created_at, messages)
SELECT t.id, $2, $3, $4, $5, $6, $7, $8, $10 FROM t`

// errParentGone: the parent whose message rows a write reused was
// deleted before the write; it is planned again without them.
var errParentGone = errors.New("postgres: the parent checkpoint is gone")

// PutCheckpoint implements store.Store. It writes the state's new
// messages (those not in the parent checkpoint) as message rows and a
// checkpoint row that refers to all of them; every store.PruneEvery steps
// it then enforces the retention policy. It returns ErrLeaseLost (and
// writes nothing) when cp.RunID is set and another run holds the
// thread's lease. After a transient error it is retried; a retry first
// looks for the checkpoint (its id is fixed before the first attempt),
// so that a write that committed is not reported as a duplicate.
func (s *Store) PutCheckpoint(ctx context.Context, cp *store.Checkpoint) error {
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
	var w *write
	for range 2 {
		if w, err = s.planWrite(ctx, cp, w == nil); err != nil {
			return err
		}
		err = s.retry.do(ctx, "put checkpoint", func(ctx context.Context, attempt int) error {
			if attempt > 1 {
				// An earlier attempt may have committed before its
				// connection died: then this checkpoint is stored already.
				if done, err := s.checkpointStored(ctx, cp); done || err != nil {
					return err
				}
			}
			return s.putCheckpoint(ctx, cp, w, meta)
		})
		if !errors.Is(err, errParentGone) {
			break
		}
		s.parents.Forget(cp.ThreadID)
	}
	if err != nil {
		return err
	}
	s.parents.Put(cp.ThreadID, w.plan.Parent(cp.ID, w.ranges))
	if s.retention.Prunes(cp.Step) {
		if err := s.prune(ctx, cp.ThreadID); err != nil {
			// The checkpoint is written; the next pruning step retries.
			s.logger.Warn("checkpoint retention failed", "thread_id", cp.ThreadID, "err", err)
		}
	}
	return nil
}

// write is a planned checkpoint write.
type write struct {
	plan     *cpmsg.Plan
	reuses   string // the parent whose message rows the plan reuses ("": none)
	drops    bool
	ranges   []byte
	newIDs   []int64
	newBodys []string
}

// planWrite matches cp's messages against its parent's (with parent
// false, against none: every message is new) and allocates the ids of
// the new message rows.
func (s *Store) planWrite(ctx context.Context, cp *store.Checkpoint, parent bool) (*write, error) {
	var p *cpmsg.Parent
	legacy := false
	if parent && cp.ParentID != "" {
		var err error
		if p, legacy, err = s.parentOf(ctx, cp); err != nil {
			return nil, fmt.Errorf("postgres: put checkpoint: %w", err)
		}
	}
	plan, err := cpmsg.NewPlan(cp.State, p, cp.KeptMessages)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s.parents.Count(len(plan.Refs), 0)
	w := &write{plan: plan, drops: plan.Drops && !legacy}
	if p != nil && (plan.Kept > 0 || len(plan.New) < len(plan.Refs)) {
		w.reuses = p.CheckpointID
	}
	if len(plan.New) > 0 {
		err := s.retry.do(ctx, "put checkpoint", func(ctx context.Context, _ int) error {
			rows, err := s.pool.Query(ctx, `SELECT nextval(pg_get_serial_sequence('antler_checkpoint_messages', 'id'))
				FROM generate_series(1, $1)`, len(plan.New))
			if err != nil {
				return err
			}
			w.newIDs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("postgres: put checkpoint: message ids: %w", err)
		}
		slices.Sort(w.newIDs)
		for k, i := range plan.New {
			plan.Refs[i].ID = w.newIDs[k]
			w.newBodys = append(w.newBodys, string(plan.Refs[i].Body))
		}
	}
	if w.ranges, err = plan.Ranges(); err != nil {
		return nil, fmt.Errorf("postgres: put checkpoint: %w", err)
	}
	return w, nil
}

// parentOf returns the message rows of cp's parent checkpoint: nil when
// it has none or it was written before schema 5 (legacy true: its
// messages have no rows).
func (s *Store) parentOf(ctx context.Context, cp *store.Checkpoint) (*cpmsg.Parent, bool, error) {
	if p := s.parents.Get(cp.ThreadID, cp.ParentID); p != nil {
		return p, false, nil
	}
	var rows []row
	err := s.retry.do(ctx, "put checkpoint", func(ctx context.Context, _ int) error {
		var err error
		rows, err = s.readCheckpoints(ctx, true, `SELECT `+checkpointCols+` FROM antler_checkpoints WHERE thread_id = $1 AND id = $2`,
			cp.ThreadID, cp.ParentID)
		return err
	})
	if err != nil || len(rows) == 0 {
		return nil, false, err
	}
	return rows[0].parent, rows[0].parent == nil, nil
}

// putCheckpoint is one attempt of PutCheckpoint.
func (s *Store) putCheckpoint(ctx context.Context, cp *store.Checkpoint, w *write, meta []byte) error {
	title := ""
	if cp.State != nil {
		title = cp.State.Title
	}
	newIDs, newBodies := w.newIDs, w.newBodys
	if newIDs == nil {
		newIDs, newBodies = []int64{}, []string{}
	}
	tag, err := s.pool.Exec(ctx, putCheckpoint,
		cp.ThreadID, cp.ID, cp.ParentID, cp.RunID, cp.Step, w.plan.State, meta, cp.CreatedAt, title,
		w.ranges, w.drops, w.reuses, newIDs, newBodies)
	if pgCode(err) == uniqueViolation {
		return fmt.Errorf("checkpoint %q: %w", cp.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: put checkpoint: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	// Nothing written: a missing thread, the lease fence, or a parent gone.
	var holder string
	var parent bool
	err = s.pool.QueryRow(ctx, `SELECT coalesce((SELECT run_id FROM antler_run_leases WHERE thread_id = $1), ''),
		EXISTS (SELECT 1 FROM antler_checkpoints WHERE thread_id = $1 AND id = $2)
		FROM antler_threads WHERE id = $1`, cp.ThreadID, w.reuses).Scan(&holder, &parent)
	switch {
	case isNoRows(err):
		return fmt.Errorf("thread %q: %w", cp.ThreadID, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("postgres: put checkpoint: %w", err)
	case holder != "" && holder != cp.RunID:
		return fmt.Errorf("checkpoint of run %s on thread %q (held by run %s): %w", cp.RunID, cp.ThreadID, holder, ErrLeaseLost)
	case w.reuses != "" && !parent:
		return errParentGone
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
