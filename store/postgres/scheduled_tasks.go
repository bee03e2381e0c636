package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/antlerhq/antler/store"
)

var _ store.ScheduledTasks = (*Store)(nil)

// migrationScheduledTasks is migration 7: DeerFlow's scheduled tasks and
// their runs (its migrations 0003 and 0007), with at most one queued or
// running run per task, which the partial unique index enforces.
const migrationScheduledTasks = `CREATE TABLE IF NOT EXISTS antler_scheduled_tasks (
		id               text PRIMARY KEY,
		user_id          text NOT NULL,
		thread_id        text,
		context_mode     text NOT NULL,
		assistant_id     text,
		title            text NOT NULL,
		prompt           text NOT NULL,
		schedule_type    text NOT NULL,
		schedule_spec    jsonb NOT NULL DEFAULT '{}',
		timezone         text NOT NULL,
		status           text NOT NULL,
		overlap_policy   text NOT NULL,
		next_run_at      timestamptz,
		last_run_at      timestamptz,
		last_run_id      text,
		last_thread_id   text,
		last_error       text,
		lease_owner      text,
		lease_expires_at timestamptz,
		run_count        integer NOT NULL DEFAULT 0,
		created_at       timestamptz NOT NULL,
		updated_at       timestamptz NOT NULL);
	CREATE INDEX IF NOT EXISTS antler_scheduled_tasks_user ON antler_scheduled_tasks (user_id, created_at DESC, id DESC);
	CREATE INDEX IF NOT EXISTS antler_scheduled_tasks_due ON antler_scheduled_tasks (next_run_at) WHERE next_run_at IS NOT NULL;

	CREATE TABLE IF NOT EXISTS antler_scheduled_task_runs (
		id            text PRIMARY KEY,
		task_id       text NOT NULL,
		thread_id     text NOT NULL,
		run_id        text,
		scheduled_for timestamptz NOT NULL,
		trigger       text NOT NULL,
		status        text NOT NULL,
		error         text,
		started_at    timestamptz,
		finished_at   timestamptz,
		created_at    timestamptz NOT NULL);
	CREATE INDEX IF NOT EXISTS antler_scheduled_task_runs_task ON antler_scheduled_task_runs (task_id, created_at DESC, id DESC);
	CREATE UNIQUE INDEX IF NOT EXISTS antler_scheduled_task_runs_active ON antler_scheduled_task_runs (task_id) WHERE status IN ('queued', 'running');`

// schedulerBudgetLock is the advisory-lock key held (for one transaction)
// while a dispatcher counts the active runs and claims due tasks, so that
// two replicas cannot both spend the same max_concurrent_runs budget.
const schedulerBudgetLock int64 = 0x616e746c7363 // "antlsc"

const taskCols = `id, user_id, thread_id, context_mode, assistant_id, title, prompt, schedule_type, schedule_spec, timezone,
	status, overlap_policy, next_run_at, last_run_at, last_run_id, last_thread_id, last_error, lease_owner, lease_expires_at,
	run_count, created_at, updated_at`

const taskRunCols = `id, task_id, thread_id, run_id, scheduled_for, trigger, status, error, started_at, finished_at, created_at`

// maxTaskList bounds a task list.
const maxTaskList = 1000

// nul returns nil for an empty string, so that it is stored as NULL.
func nul(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nulTime returns nil for a zero time.
func nulTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

func scanTask(r pgx.Row) (*store.ScheduledTask, error) {
	var t store.ScheduledTask
	var thread, assistant, lastRun, lastThread, lastErr, leaseOwner *string
	var next, last, lease *time.Time
	var spec []byte
	if err := r.Scan(&t.ID, &t.UserID, &thread, &t.ContextMode, &assistant, &t.Title, &t.Prompt, &t.ScheduleType, &spec, &t.Timezone,
		&t.Status, &t.OverlapPolicy, &next, &last, &lastRun, &lastThread, &lastErr, &leaseOwner, &lease,
		&t.RunCount, &t.CreatedAt, &t.UpdatedAt); err != nil {
		return nil, err
	}
	t.ThreadID, t.AssistantID, t.LastRunID, t.LastThreadID, t.LastError, t.LeaseOwner =
		deref(thread), deref(assistant), deref(lastRun), deref(lastThread), deref(lastErr), deref(leaseOwner)
	t.NextRunAt, t.LastRunAt, t.LeaseExpiresAt = derefTime(next), derefTime(last), derefTime(lease)
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	if err := json.Unmarshal(spec, &t.ScheduleSpec); err != nil {
		return nil, fmt.Errorf("postgres: decode schedule_spec of task %q: %w", t.ID, err)
	}
	return &t, nil
}

func scanTaskRun(r pgx.Row) (*store.ScheduledTaskRun, error) {
	var x store.ScheduledTaskRun
	var runID, errText *string
	var started, finished *time.Time
	if err := r.Scan(&x.ID, &x.TaskID, &x.ThreadID, &runID, &x.ScheduledFor, &x.Trigger, &x.Status, &errText, &started, &finished, &x.CreatedAt); err != nil {
		return nil, err
	}
	x.RunID, x.Error = deref(runID), deref(errText)
	x.ScheduledFor, x.CreatedAt = x.ScheduledFor.UTC(), x.CreatedAt.UTC()
	x.StartedAt, x.FinishedAt = derefTime(started), derefTime(finished)
	return &x, nil
}

func encodeSpec(m map[string]any) ([]byte, error) {
	if m == nil {
		m = map[string]any{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("postgres: encode schedule_spec: %w", err)
	}
	return b, nil
}

// CreateScheduledTask implements store.ScheduledTasks.
func (s *Store) CreateScheduledTask(ctx context.Context, t *store.ScheduledTask) error {
	if t.ID == "" {
		return errors.New("postgres: scheduled task id is empty")
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now()
	}
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = t.CreatedAt
	}
	spec, err := encodeSpec(t.ScheduleSpec)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO antler_scheduled_tasks (`+taskCols+`)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22)`,
		t.ID, t.UserID, nul(t.ThreadID), t.ContextMode, nul(t.AssistantID), t.Title, t.Prompt, t.ScheduleType, spec, t.Timezone,
		t.Status, t.OverlapPolicy, nulTime(t.NextRunAt), nulTime(t.LastRunAt), nul(t.LastRunID), nul(t.LastThreadID),
		nul(t.LastError), nul(t.LeaseOwner), nulTime(t.LeaseExpiresAt), t.RunCount, t.CreatedAt, t.UpdatedAt)
	if pgCode(err) == uniqueViolation {
		return fmt.Errorf("scheduled task %q: %w", t.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: create scheduled task: %w", err)
	}
	return nil
}

// GetScheduledTask implements store.ScheduledTasks.
func (s *Store) GetScheduledTask(ctx context.Context, id string) (*store.ScheduledTask, error) {
	var t *store.ScheduledTask
	err := s.retry.do(ctx, "get scheduled task", func(ctx context.Context, _ int) error {
		var err error
		t, err = scanTask(s.pool.QueryRow(ctx, `SELECT `+taskCols+` FROM antler_scheduled_tasks WHERE id = $1`, id))
		return err
	})
	if isNoRows(err) {
		return nil, fmt.Errorf("scheduled task %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get scheduled task: %w", err)
	}
	return t, nil
}

// ListScheduledTasks implements store.ScheduledTasks.
func (s *Store) ListScheduledTasks(ctx context.Context, q store.TaskQuery) ([]*store.ScheduledTask, error) {
	var where []string
	var args []any
	for _, f := range []struct{ col, v string }{{"user_id", q.UserID}, {"thread_id", q.ThreadID}, {"status", q.Status}} {
		if f.v != "" {
			args = append(args, f.v)
			where = append(where, fmt.Sprintf("%s = $%d", f.col, len(args)))
		}
	}
	query := `SELECT ` + taskCols + ` FROM antler_scheduled_tasks`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	limit := q.Limit
	if limit <= 0 || limit > maxTaskList {
		limit = maxTaskList
	}
	args = append(args, limit)
	query += fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT $%d`, len(args))
	return queryAll(ctx, s, "list scheduled tasks", scanTask, query, args...)
}

// EditScheduledTask implements store.ScheduledTasks.
func (s *Store) EditScheduledTask(ctx context.Context, id string, e store.TaskEdit) (*store.ScheduledTask, error) {
	args := []any{now()}
	sets := []string{"updated_at = $1"}
	add := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", col, len(args)))
	}
	if e.ThreadID != nil {
		add("thread_id", nul(*e.ThreadID))
	}
	if e.ContextMode != nil {
		add("context_mode", *e.ContextMode)
	}
	if e.Title != nil {
		add("title", *e.Title)
	}
	if e.Prompt != nil {
		add("prompt", *e.Prompt)
	}
	if e.ScheduleSpec != nil {
		spec, err := encodeSpec(e.ScheduleSpec)
		if err != nil {
			return nil, err
		}
		add("schedule_spec", spec)
	}
	if e.Timezone != nil {
		add("timezone", *e.Timezone)
	}
	if e.Status != nil {
		add("status", *e.Status)
	}
	if e.NextRunAt != nil {
		add("next_run_at", nulTime(*e.NextRunAt))
	}
	if e.LastError != nil {
		add("last_error", nul(*e.LastError))
	}
	args = append(args, id)
	t, err := scanTask(s.pool.QueryRow(ctx, fmt.Sprintf(`UPDATE antler_scheduled_tasks SET %s WHERE id = $%d RETURNING `+taskCols,
		strings.Join(sets, ", "), len(args)), args...))
	if isNoRows(err) {
		return nil, fmt.Errorf("scheduled task %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: edit scheduled task: %w", err)
	}
	return t, nil
}

// DeleteScheduledTask implements store.ScheduledTasks.
func (s *Store) DeleteScheduledTask(ctx context.Context, id string) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: delete scheduled task: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	tag, err := tx.Exec(ctx, `DELETE FROM antler_scheduled_tasks WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("postgres: delete scheduled task: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("scheduled task %q: %w", id, store.ErrNotFound)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM antler_scheduled_task_runs WHERE task_id = $1`, id); err != nil {
		return fmt.Errorf("postgres: delete scheduled task: %w", err)
	}
	return tx.Commit(ctx)
}

// ClaimDueScheduledTasks implements store.ScheduledTasks: the count of
// active runs and the claim run under a transaction-level advisory lock
// (one claim at a time across replicas), and the due rows are locked FOR
// UPDATE SKIP LOCKED, so that a row another transaction holds (a manual
// trigger's lease) is passed over rather than waited for.
func (s *Store) ClaimDueScheduledTasks(ctx context.Context, r store.ClaimRequest) ([]*store.ScheduledTask, error) {
	if r.MaxActive <= 0 {
		return nil, nil
	}
	at := r.Now.UTC()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: claim scheduled tasks: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, schedulerBudgetLock); err != nil {
		return nil, fmt.Errorf("postgres: claim scheduled tasks: lock: %w", err)
	}
	var active int
	err = tx.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM antler_scheduled_task_runs WHERE status IN ('queued', 'running')) +
		(SELECT count(*) FROM antler_scheduled_tasks t WHERE t.lease_owner IS NOT NULL AND t.lease_expires_at >= $1
			AND NOT EXISTS (SELECT 1 FROM antler_scheduled_task_runs r WHERE r.task_id = t.id AND r.status IN ('queued', 'running')))`,
		at).Scan(&active)
	if err != nil {
		return nil, fmt.Errorf("postgres: claim scheduled tasks: %w", err)
	}
	limit := r.MaxActive - active
	if limit <= 0 {
		return nil, nil
	}
	rows, err := tx.Query(ctx, `SELECT `+taskCols+` FROM antler_scheduled_tasks
		WHERE next_run_at IS NOT NULL AND next_run_at <= $1 AND (
			(status = 'enabled' AND (lease_expires_at IS NULL OR lease_expires_at < $1)) OR
			(status = 'running' AND lease_expires_at IS NOT NULL AND lease_expires_at < $1))
		ORDER BY next_run_at, id LIMIT $2 FOR UPDATE SKIP LOCKED`, at, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: claim scheduled tasks: %w", err)
	}
	var out []*store.ScheduledTask
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: claim scheduled tasks: %w", err)
		}
		out = append(out, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: claim scheduled tasks: %w", err)
	}
	expires, updated := at.Add(r.LeaseFor), now()
	for _, t := range out {
		if _, err := tx.Exec(ctx, `UPDATE antler_scheduled_tasks SET lease_owner = $1, lease_expires_at = $2, status = 'running', updated_at = $3 WHERE id = $4`,
			r.Owner, expires, updated, t.ID); err != nil {
			return nil, fmt.Errorf("postgres: claim scheduled tasks: %w", err)
		}
		t.LeaseOwner, t.LeaseExpiresAt, t.Status, t.UpdatedAt = r.Owner, expires, store.TaskRunning, updated
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("postgres: claim scheduled tasks: %w", err)
	}
	return out, nil
}

// LeaseScheduledTask implements store.ScheduledTasks.
func (s *Store) LeaseScheduledTask(ctx context.Context, id, owner string, at time.Time, leaseFor time.Duration) (*store.ScheduledTask, error) {
	t, err := scanTask(s.pool.QueryRow(ctx, `UPDATE antler_scheduled_tasks SET lease_owner = $1, lease_expires_at = $2, updated_at = $3
		WHERE id = $4 AND (lease_expires_at IS NULL OR lease_expires_at < $5) RETURNING `+taskCols,
		owner, at.UTC().Add(leaseFor), now(), id, at.UTC()))
	if isNoRows(err) {
		if _, err := s.GetScheduledTask(ctx, id); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: lease scheduled task: %w", err)
	}
	return t, nil
}

// FinishScheduledDispatch implements store.ScheduledTasks.
func (s *Store) FinishScheduledDispatch(ctx context.Context, id string, d store.DispatchDone) (bool, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("postgres: finish scheduled dispatch: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var status string
	var owner *string
	err = tx.QueryRow(ctx, `SELECT status, lease_owner FROM antler_scheduled_tasks WHERE id = $1 FOR UPDATE`, id).Scan(&status, &owner)
	if isNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("postgres: finish scheduled dispatch: %w", err)
	}
	if d.Owner != "" && deref(owner) != d.Owner {
		s.logger.Warn("fenced a stale scheduled task update", "task_id", id, "expected_owner", d.Owner, "owner", deref(owner))
		return false, nil
	}
	keep := d.ProtectTerminal && store.TerminalTask(status)
	count := 0
	if d.CountRun {
		count = 1
	}
	_, err = tx.Exec(ctx, `UPDATE antler_scheduled_tasks SET
		status = CASE WHEN $1 THEN status ELSE $2 END,
		last_error = CASE WHEN $1 THEN last_error ELSE $3 END,
		next_run_at = $4, last_run_at = $5, last_run_id = $6, last_thread_id = $7, run_count = run_count + $8,
		lease_owner = NULL, lease_expires_at = NULL, updated_at = $9 WHERE id = $10`,
		keep, d.Status, nul(d.LastError), nulTime(d.NextRunAt), nulTime(d.LastRunAt), nul(d.LastRunID), nul(d.LastThreadID), count, now(), id)
	if err != nil {
		return false, fmt.Errorf("postgres: finish scheduled dispatch: %w", err)
	}
	return true, tx.Commit(ctx)
}

// CreateScheduledTaskRun implements store.ScheduledTasks.
func (s *Store) CreateScheduledTaskRun(ctx context.Context, r *store.ScheduledTaskRun) error {
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now()
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO antler_scheduled_task_runs (`+taskRunCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
		r.ID, r.TaskID, r.ThreadID, nul(r.RunID), r.ScheduledFor.UTC(), r.Trigger, r.Status, nul(r.Error),
		nulTime(r.StartedAt), nulTime(r.FinishedAt), r.CreatedAt)
	if pgCode(err) == uniqueViolation {
		if strings.Contains(err.Error(), "antler_scheduled_task_runs_active") {
			return fmt.Errorf("scheduled task %q: %w", r.TaskID, store.ErrActiveScheduledRun)
		}
		return fmt.Errorf("scheduled task run %q: %w", r.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: create scheduled task run: %w", err)
	}
	return nil
}

// UpdateScheduledTaskRun implements store.ScheduledTasks.
func (s *Store) UpdateScheduledTaskRun(ctx context.Context, id string, u store.TaskRunUpdate) error {
	tag, err := s.pool.Exec(ctx, `UPDATE antler_scheduled_task_runs SET
		status = CASE WHEN $1 AND status IN ('success', 'failed', 'skipped', 'interrupted') THEN status ELSE $2 END,
		error = CASE WHEN $1 AND status IN ('success', 'failed', 'skipped', 'interrupted') THEN error ELSE $3 END,
		finished_at = CASE WHEN $1 AND status IN ('success', 'failed', 'skipped', 'interrupted') THEN finished_at ELSE coalesce($4, finished_at) END,
		run_id = coalesce(run_id, $5), started_at = coalesce(started_at, $6)
		WHERE id = $7`,
		u.ProtectTerminal, u.Status, nul(u.Error), nulTime(u.FinishedAt), nul(u.RunID), nulTime(u.StartedAt), id)
	if err != nil {
		return fmt.Errorf("postgres: update scheduled task run: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("scheduled task run %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// ListScheduledTaskRuns implements store.ScheduledTasks.
func (s *Store) ListScheduledTaskRuns(ctx context.Context, taskID string, limit, offset int) ([]*store.ScheduledTaskRun, error) {
	if limit <= 0 || limit > maxTaskList {
		limit = maxTaskList
	}
	return s.taskRuns(ctx, `SELECT `+taskRunCols+` FROM antler_scheduled_task_runs WHERE task_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, taskID, limit, max(offset, 0))
}

// ActiveScheduledTaskRuns implements store.ScheduledTasks.
func (s *Store) ActiveScheduledTaskRuns(ctx context.Context, limit int) ([]*store.ScheduledTaskRun, error) {
	if limit <= 0 || limit > maxTaskList {
		limit = maxTaskList
	}
	return s.taskRuns(ctx, `SELECT `+taskRunCols+` FROM antler_scheduled_task_runs WHERE status IN ('queued', 'running')
		ORDER BY created_at, id LIMIT $1`, limit)
}

func (s *Store) taskRuns(ctx context.Context, query string, args ...any) ([]*store.ScheduledTaskRun, error) {
	return queryAll(ctx, s, "list scheduled task runs", scanTaskRun, query, args...)
}

// queryAll runs query (retried as one read, named what in errors) and
// scans every row with scan.
func queryAll[T any](ctx context.Context, s *Store, what string, scan func(pgx.Row) (T, error), query string, args ...any) ([]T, error) {
	var out []T
	err := s.retry.do(ctx, what, func(ctx context.Context, _ int) error {
		out = nil
		rows, err := s.pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			x, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, x)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	return out, nil
}

// CountActiveScheduledTaskRuns implements store.ScheduledTasks.
func (s *Store) CountActiveScheduledTaskRuns(ctx context.Context) (int, error) {
	var n int
	err := s.retry.do(ctx, "count active scheduled task runs", func(ctx context.Context, _ int) error {
		return s.pool.QueryRow(ctx, `SELECT count(*) FROM antler_scheduled_task_runs WHERE status IN ('queued', 'running')`).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: count active scheduled task runs: %w", err)
	}
	return n, nil
}

// PruneScheduledTaskRuns implements store.ScheduledTasks.
func (s *Store) PruneScheduledTaskRuns(ctx context.Context, taskID string, keep int) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM antler_scheduled_task_runs WHERE task_id = $1 AND status NOT IN ('queued', 'running')
		AND id NOT IN (SELECT id FROM antler_scheduled_task_runs WHERE task_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2)`,
		taskID, max(keep, 0))
	if err != nil {
		return 0, fmt.Errorf("postgres: prune scheduled task runs: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
