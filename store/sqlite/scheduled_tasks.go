package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/antlerhq/antler/store"
)

var _ store.ScheduledTasks = (*Store)(nil)

// schemaScheduledTasks (version 6) holds DeerFlow's scheduled tasks and their runs (its
// migrations 0003 and 0007): at most one queued or running run per task,
// which the partial unique index enforces. Times are Unix nanoseconds,
// NULL for none.
var schemaScheduledTasks = []string{
	`CREATE TABLE IF NOT EXISTS scheduled_tasks (
			id TEXT PRIMARY KEY,
			user_id TEXT NOT NULL,
			thread_id TEXT,
			context_mode TEXT NOT NULL,
			assistant_id TEXT,
			title TEXT NOT NULL,
			prompt TEXT NOT NULL,
			schedule_type TEXT NOT NULL,
			schedule_spec TEXT NOT NULL,
			timezone TEXT NOT NULL,
			status TEXT NOT NULL,
			overlap_policy TEXT NOT NULL,
			next_run_at INTEGER,
			last_run_at INTEGER,
			last_run_id TEXT,
			last_thread_id TEXT,
			last_error TEXT,
			lease_owner TEXT,
			lease_expires_at INTEGER,
			run_count INTEGER NOT NULL DEFAULT 0,
			created_at INTEGER NOT NULL,
			updated_at INTEGER NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS scheduled_tasks_user ON scheduled_tasks(user_id, created_at DESC)`,
	`CREATE INDEX IF NOT EXISTS scheduled_tasks_due ON scheduled_tasks(next_run_at) WHERE next_run_at IS NOT NULL`,
	`CREATE TABLE IF NOT EXISTS scheduled_task_runs (
			id TEXT PRIMARY KEY,
			task_id TEXT NOT NULL,
			thread_id TEXT NOT NULL,
			run_id TEXT,
			scheduled_for INTEGER NOT NULL,
			trigger TEXT NOT NULL,
			status TEXT NOT NULL,
			error TEXT,
			started_at INTEGER,
			finished_at INTEGER,
			created_at INTEGER NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS scheduled_task_runs_task ON scheduled_task_runs(task_id, created_at DESC)`,
	`CREATE UNIQUE INDEX IF NOT EXISTS scheduled_task_runs_active ON scheduled_task_runs(task_id) WHERE status IN ('queued', 'running')`,
}

const taskColumns = `id, user_id, thread_id, context_mode, assistant_id, title, prompt, schedule_type, schedule_spec, timezone,
	status, overlap_policy, next_run_at, last_run_at, last_run_id, last_thread_id, last_error, lease_owner, lease_expires_at,
	run_count, created_at, updated_at`

const taskRunColumns = `id, task_id, thread_id, run_id, scheduled_for, trigger, status, error, started_at, finished_at, created_at`

// maxTaskList bounds a task list.
const maxTaskList = 1000

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func nullNanos(t time.Time) sql.NullInt64 {
	return sql.NullInt64{Int64: t.UnixNano(), Valid: !t.IsZero()}
}

func fromNullNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromNanos(n.Int64)
}

type rowScanner interface{ Scan(dest ...any) error }

func scanTask(r rowScanner) (*store.ScheduledTask, error) {
	var t store.ScheduledTask
	var thread, assistant, lastRun, lastThread, lastErr, leaseOwner sql.NullString
	var next, last, lease sql.NullInt64
	var spec string
	var created, updated int64
	if err := r.Scan(&t.ID, &t.UserID, &thread, &t.ContextMode, &assistant, &t.Title, &t.Prompt, &t.ScheduleType, &spec, &t.Timezone,
		&t.Status, &t.OverlapPolicy, &next, &last, &lastRun, &lastThread, &lastErr, &leaseOwner, &lease,
		&t.RunCount, &created, &updated); err != nil {
		return nil, err
	}
	t.ThreadID, t.AssistantID, t.LastRunID, t.LastThreadID, t.LastError, t.LeaseOwner =
		thread.String, assistant.String, lastRun.String, lastThread.String, lastErr.String, leaseOwner.String
	t.NextRunAt, t.LastRunAt, t.LeaseExpiresAt = fromNullNanos(next), fromNullNanos(last), fromNullNanos(lease)
	t.CreatedAt, t.UpdatedAt = fromNanos(created), fromNanos(updated)
	if err := json.Unmarshal([]byte(spec), &t.ScheduleSpec); err != nil {
		return nil, fmt.Errorf("sqlite: decode schedule_spec of task %q: %w", t.ID, err)
	}
	return &t, nil
}

func scanTaskRun(r rowScanner) (*store.ScheduledTaskRun, error) {
	var x store.ScheduledTaskRun
	var runID, errText sql.NullString
	var started, finished sql.NullInt64
	var scheduled, created int64
	if err := r.Scan(&x.ID, &x.TaskID, &x.ThreadID, &runID, &scheduled, &x.Trigger, &x.Status, &errText, &started, &finished, &created); err != nil {
		return nil, err
	}
	x.RunID, x.Error = runID.String, errText.String
	x.ScheduledFor, x.CreatedAt = fromNanos(scheduled), fromNanos(created)
	x.StartedAt, x.FinishedAt = fromNullNanos(started), fromNullNanos(finished)
	return &x, nil
}

func encodeSpec(m map[string]any) (string, error) {
	if m == nil {
		m = map[string]any{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("sqlite: encode schedule_spec: %w", err)
	}
	return string(b), nil
}

// CreateScheduledTask implements store.ScheduledTasks.
func (s *Store) CreateScheduledTask(ctx context.Context, t *store.ScheduledTask) error {
	if t.ID == "" {
		return errors.New("sqlite: scheduled task id is empty")
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
	_, err = s.writer.ExecContext(ctx, `INSERT INTO scheduled_tasks (`+taskColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		t.ID, t.UserID, nullString(t.ThreadID), t.ContextMode, nullString(t.AssistantID), t.Title, t.Prompt, t.ScheduleType, spec, t.Timezone,
		t.Status, t.OverlapPolicy, nullNanos(t.NextRunAt), nullNanos(t.LastRunAt), nullString(t.LastRunID), nullString(t.LastThreadID),
		nullString(t.LastError), nullString(t.LeaseOwner), nullNanos(t.LeaseExpiresAt), t.RunCount, toNanos(t.CreatedAt), toNanos(t.UpdatedAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("scheduled task %q: %w", t.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("sqlite: create scheduled task: %w", err)
	}
	return nil
}

// GetScheduledTask implements store.ScheduledTasks.
func (s *Store) GetScheduledTask(ctx context.Context, id string) (*store.ScheduledTask, error) {
	return getTask(ctx, s.reader, id)
}

type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getTask(ctx context.Context, q rowQuerier, id string) (*store.ScheduledTask, error) {
	t, err := scanTask(q.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM scheduled_tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("scheduled task %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get scheduled task: %w", err)
	}
	return t, nil
}

// ListScheduledTasks implements store.ScheduledTasks.
func (s *Store) ListScheduledTasks(ctx context.Context, q store.TaskQuery) ([]*store.ScheduledTask, error) {
	var where []string
	var args []any
	for _, f := range []struct{ col, v string }{{"user_id", q.UserID}, {"thread_id", q.ThreadID}, {"status", q.Status}} {
		if f.v != "" {
			where = append(where, f.col+" = ?")
			args = append(args, f.v)
		}
	}
	query := `SELECT ` + taskColumns + ` FROM scheduled_tasks`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	limit := q.Limit
	if limit <= 0 || limit > maxTaskList {
		limit = maxTaskList
	}
	query += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	rows, err := s.reader.QueryContext(ctx, query, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list scheduled tasks: %w", err)
	}
	defer rows.Close()
	var out []*store.ScheduledTask
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list scheduled tasks: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// EditScheduledTask implements store.ScheduledTasks.
func (s *Store) EditScheduledTask(ctx context.Context, id string, e store.TaskEdit) (*store.ScheduledTask, error) {
	sets := []string{"updated_at = ?"}
	args := []any{toNanos(now())}
	add := func(col string, v any) {
		sets = append(sets, col+" = ?")
		args = append(args, v)
	}
	if e.ThreadID != nil {
		add("thread_id", nullString(*e.ThreadID))
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
		add("next_run_at", nullNanos(*e.NextRunAt))
	}
	if e.LastError != nil {
		add("last_error", nullString(*e.LastError))
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: edit scheduled task: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE scheduled_tasks SET `+strings.Join(sets, ", ")+` WHERE id = ?`, append(args, id)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: edit scheduled task: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, fmt.Errorf("scheduled task %q: %w", id, store.ErrNotFound)
	}
	t, err := getTask(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: edit scheduled task: %w", err)
	}
	return t, nil
}

// DeleteScheduledTask implements store.ScheduledTasks.
func (s *Store) DeleteScheduledTask(ctx context.Context, id string) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: delete scheduled task: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM scheduled_tasks WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete scheduled task: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("scheduled task %q: %w", id, store.ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM scheduled_task_runs WHERE task_id = ?`, id); err != nil {
		return fmt.Errorf("sqlite: delete scheduled task: %w", err)
	}
	return tx.Commit()
}

// ClaimDueScheduledTasks implements store.ScheduledTasks. The writer's
// transactions begin IMMEDIATE: the count and the claim hold the
// database's write lock, so no other process claims in between.
func (s *Store) ClaimDueScheduledTasks(ctx context.Context, r store.ClaimRequest) ([]*store.ScheduledTask, error) {
	if r.MaxActive <= 0 {
		return nil, nil
	}
	nowN := toNanos(r.Now)
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim scheduled tasks: %w", err)
	}
	defer tx.Rollback()
	var active int
	err = tx.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM scheduled_task_runs WHERE status IN ('queued', 'running')) +
		(SELECT count(*) FROM scheduled_tasks t WHERE t.lease_owner IS NOT NULL AND t.lease_expires_at >= ?
			AND NOT EXISTS (SELECT 1 FROM scheduled_task_runs r WHERE r.task_id = t.id AND r.status IN ('queued', 'running')))`,
		nowN).Scan(&active)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim scheduled tasks: %w", err)
	}
	limit := r.MaxActive - active
	if limit <= 0 {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+taskColumns+` FROM scheduled_tasks
		WHERE next_run_at IS NOT NULL AND next_run_at <= ? AND (
			(status = 'enabled' AND (lease_expires_at IS NULL OR lease_expires_at < ?)) OR
			(status = 'running' AND lease_expires_at IS NOT NULL AND lease_expires_at < ?))
		ORDER BY next_run_at, id LIMIT ?`, nowN, nowN, nowN, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim scheduled tasks: %w", err)
	}
	var out []*store.ScheduledTask
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: claim scheduled tasks: %w", err)
		}
		out = append(out, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: claim scheduled tasks: %w", err)
	}
	expires, updated := r.Now.Add(r.LeaseFor), now()
	for _, t := range out {
		if _, err := tx.ExecContext(ctx, `UPDATE scheduled_tasks SET lease_owner = ?, lease_expires_at = ?, status = 'running', updated_at = ? WHERE id = ?`,
			r.Owner, toNanos(expires), toNanos(updated), t.ID); err != nil {
			return nil, fmt.Errorf("sqlite: claim scheduled tasks: %w", err)
		}
		t.LeaseOwner, t.LeaseExpiresAt, t.Status, t.UpdatedAt = r.Owner, expires, store.TaskRunning, updated
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: claim scheduled tasks: %w", err)
	}
	return out, nil
}

// LeaseScheduledTask implements store.ScheduledTasks.
func (s *Store) LeaseScheduledTask(ctx context.Context, id, owner string, at time.Time, leaseFor time.Duration) (*store.ScheduledTask, error) {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lease scheduled task: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE scheduled_tasks SET lease_owner = ?, lease_expires_at = ?, updated_at = ?
		WHERE id = ? AND (lease_expires_at IS NULL OR lease_expires_at < ?)`,
		owner, toNanos(at.Add(leaseFor)), toNanos(now()), id, toNanos(at))
	if err != nil {
		return nil, fmt.Errorf("sqlite: lease scheduled task: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := getTask(ctx, tx, id); err != nil {
			return nil, err
		}
		return nil, nil
	}
	t, err := getTask(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	return t, tx.Commit()
}

// FinishScheduledDispatch implements store.ScheduledTasks.
func (s *Store) FinishScheduledDispatch(ctx context.Context, id string, d store.DispatchDone) (bool, error) {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("sqlite: finish scheduled dispatch: %w", err)
	}
	defer tx.Rollback()
	var status string
	var owner sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT status, lease_owner FROM scheduled_tasks WHERE id = ?`, id).Scan(&status, &owner)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: finish scheduled dispatch: %w", err)
	}
	if d.Owner != "" && owner.String != d.Owner {
		s.logger.Warn("fenced a stale scheduled task update", "task_id", id, "expected_owner", d.Owner, "owner", owner.String)
		return false, nil
	}
	keep := d.ProtectTerminal && store.TerminalTask(status)
	count := 0
	if d.CountRun {
		count = 1
	}
	_, err = tx.ExecContext(ctx, `UPDATE scheduled_tasks SET
		status = CASE WHEN ? THEN status ELSE ? END,
		last_error = CASE WHEN ? THEN last_error ELSE ? END,
		next_run_at = ?, last_run_at = ?, last_run_id = ?, last_thread_id = ?, run_count = run_count + ?,
		lease_owner = NULL, lease_expires_at = NULL, updated_at = ? WHERE id = ?`,
		keep, d.Status, keep, nullString(d.LastError), nullNanos(d.NextRunAt), nullNanos(d.LastRunAt),
		nullString(d.LastRunID), nullString(d.LastThreadID), count, toNanos(now()), id)
	if err != nil {
		return false, fmt.Errorf("sqlite: finish scheduled dispatch: %w", err)
	}
	return true, tx.Commit()
}

// CreateScheduledTaskRun implements store.ScheduledTasks.
func (s *Store) CreateScheduledTaskRun(ctx context.Context, r *store.ScheduledTaskRun) error {
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now()
	}
	_, err := s.writer.ExecContext(ctx, `INSERT INTO scheduled_task_runs (`+taskRunColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		r.ID, r.TaskID, r.ThreadID, nullString(r.RunID), toNanos(r.ScheduledFor), r.Trigger, r.Status, nullString(r.Error),
		nullNanos(r.StartedAt), nullNanos(r.FinishedAt), toNanos(r.CreatedAt))
	if isUniqueViolation(err) {
		if strings.Contains(err.Error(), "scheduled_task_runs.id") {
			return fmt.Errorf("scheduled task run %q: %w", r.ID, store.ErrExists)
		}
		return fmt.Errorf("scheduled task %q: %w", r.TaskID, store.ErrActiveScheduledRun)
	}
	if err != nil {
		return fmt.Errorf("sqlite: create scheduled task run: %w", err)
	}
	return nil
}

// UpdateScheduledTaskRun implements store.ScheduledTasks.
func (s *Store) UpdateScheduledTaskRun(ctx context.Context, id string, u store.TaskRunUpdate) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: update scheduled task run: %w", err)
	}
	defer tx.Rollback()
	var status string
	err = tx.QueryRowContext(ctx, `SELECT status FROM scheduled_task_runs WHERE id = ?`, id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("scheduled task run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("sqlite: update scheduled task run: %w", err)
	}
	if u.ProtectTerminal && store.TerminalTaskRun(status) {
		_, err = tx.ExecContext(ctx, `UPDATE scheduled_task_runs SET run_id = coalesce(run_id, ?), started_at = coalesce(started_at, ?) WHERE id = ?`,
			nullString(u.RunID), nullNanos(u.StartedAt), id)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE scheduled_task_runs SET status = ?, run_id = coalesce(?, run_id), error = ?,
			started_at = coalesce(?, started_at), finished_at = coalesce(?, finished_at) WHERE id = ?`,
			u.Status, nullString(u.RunID), nullString(u.Error), nullNanos(u.StartedAt), nullNanos(u.FinishedAt), id)
	}
	if err != nil {
		return fmt.Errorf("sqlite: update scheduled task run: %w", err)
	}
	return tx.Commit()
}

// ListScheduledTaskRuns implements store.ScheduledTasks.
func (s *Store) ListScheduledTaskRuns(ctx context.Context, taskID string, limit, offset int) ([]*store.ScheduledTaskRun, error) {
	if limit <= 0 || limit > maxTaskList {
		limit = maxTaskList
	}
	return s.taskRuns(ctx, `SELECT `+taskRunColumns+` FROM scheduled_task_runs WHERE task_id = ?
		ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, taskID, limit, max(offset, 0))
}

// ActiveScheduledTaskRuns implements store.ScheduledTasks.
func (s *Store) ActiveScheduledTaskRuns(ctx context.Context, limit int) ([]*store.ScheduledTaskRun, error) {
	if limit <= 0 || limit > maxTaskList {
		limit = maxTaskList
	}
	return s.taskRuns(ctx, `SELECT `+taskRunColumns+` FROM scheduled_task_runs WHERE status IN ('queued', 'running')
		ORDER BY created_at, id LIMIT ?`, limit)
}

func (s *Store) taskRuns(ctx context.Context, query string, args ...any) ([]*store.ScheduledTaskRun, error) {
	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list scheduled task runs: %w", err)
	}
	defer rows.Close()
	var out []*store.ScheduledTaskRun
	for rows.Next() {
		x, err := scanTaskRun(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list scheduled task runs: %w", err)
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// CountActiveScheduledTaskRuns implements store.ScheduledTasks.
func (s *Store) CountActiveScheduledTaskRuns(ctx context.Context) (int, error) {
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM scheduled_task_runs WHERE status IN ('queued', 'running')`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count active scheduled task runs: %w", err)
	}
	return n, nil
}

// PruneScheduledTaskRuns implements store.ScheduledTasks.
func (s *Store) PruneScheduledTaskRuns(ctx context.Context, taskID string, keep int) (int, error) {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM scheduled_task_runs WHERE task_id = ? AND status NOT IN ('queued', 'running')
		AND id NOT IN (SELECT id FROM scheduled_task_runs WHERE task_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)`,
		taskID, taskID, max(keep, 0))
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune scheduled task runs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
