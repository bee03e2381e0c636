package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/antlerhq/antler/store"
)

// schemaMCPTasks creates the MCP background tasks (store.MCPTasks) of
// schema version 5. A trigger deletes a thread's tasks with the thread.
var schemaMCPTasks = []string{
	`CREATE TABLE IF NOT EXISTS mcp_tasks (
			id TEXT PRIMARY KEY,
			user_id TEXT NOT NULL,
			thread_id TEXT NOT NULL,
			run_id TEXT NOT NULL DEFAULT '',
			tool_call_id TEXT NOT NULL DEFAULT '',
			server TEXT NOT NULL,
			toolset TEXT NOT NULL,
			remote_id TEXT NOT NULL,
			submit_tool TEXT NOT NULL,
			status_tool TEXT NOT NULL,
			cancel_tool TEXT NOT NULL,
			status TEXT NOT NULL,
			result TEXT,
			result_preview TEXT NOT NULL DEFAULT '',
			result_truncated INTEGER NOT NULL DEFAULT 0,
			error TEXT NOT NULL DEFAULT '',
			input_required TEXT,
			next_poll_at INTEGER,
			last_polled_at INTEGER,
			last_poll_error TEXT NOT NULL DEFAULT '',
			poll_errors INTEGER NOT NULL DEFAULT 0,
			poll_attempts INTEGER NOT NULL DEFAULT 0,
			cancel_requested_at INTEGER,
			next_cancel_at INTEGER,
			cancel_attempts INTEGER NOT NULL DEFAULT 0,
			lease_owner TEXT NOT NULL DEFAULT '',
			lease_expires_at INTEGER,
			created_at INTEGER NOT NULL,
			updated_at INTEGER NOT NULL,
			completed_at INTEGER,
			UNIQUE (user_id, server, remote_id))`,
	`CREATE INDEX IF NOT EXISTS mcp_tasks_thread ON mcp_tasks(thread_id, user_id, created_at DESC)`,
	`CREATE INDEX IF NOT EXISTS mcp_tasks_due ON mcp_tasks(next_poll_at) WHERE status IN ('submitted', 'working', 'input_required')`,
	`CREATE TRIGGER IF NOT EXISTS mcp_tasks_thread_deleted AFTER DELETE ON threads
		BEGIN DELETE FROM mcp_tasks WHERE thread_id = OLD.id; END`,
}

// mcpTaskNoticeColumns are the columns of schema version 7: the notices
// of a task's changes to its thread.
var mcpTaskNoticeColumns = [][2]string{
	{"notify_due_at", "INTEGER"},
	{"notify_attempts", "INTEGER NOT NULL DEFAULT 0"},
	{"notify_error", "TEXT NOT NULL DEFAULT ''"},
	{"notified_at", "INTEGER"},
}

// schemaMCPTaskNotices returns the statements of schema version 7: the
// notice columns mcp_tasks lacks (a database turned back to an older
// version by a test may have them), and their index.
func schemaMCPTaskNotices(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info('mcp_tasks')`)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		have[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range mcpTaskNoticeColumns {
		if !have[c[0]] {
			out = append(out, `ALTER TABLE mcp_tasks ADD COLUMN `+c[0]+` `+c[1])
		}
	}
	return append(out, `CREATE INDEX IF NOT EXISTS mcp_tasks_notify ON mcp_tasks(notify_due_at) WHERE notify_due_at IS NOT NULL`), nil
}

const mcpTaskCols = `id, user_id, thread_id, run_id, tool_call_id, server, toolset, remote_id,
	submit_tool, status_tool, cancel_tool, status, result, result_preview, result_truncated, error,
	input_required, next_poll_at, last_polled_at, last_poll_error, poll_errors, poll_attempts,
	cancel_requested_at, next_cancel_at, cancel_attempts, lease_owner, lease_expires_at,
	created_at, updated_at, completed_at, notify_due_at, notify_attempts, notify_error, notified_at`

const (
	mcpActive   = `('submitted', 'working', 'input_required')`
	mcpTerminal = `('completed', 'failed', 'cancelled')`
)

var _ store.MCPTasks = (*Store)(nil)

// optNanos is t in nanoseconds, or NULL for the zero time.
func optNanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

func optTime(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromNanos(n.Int64)
}

// optJSON is raw as text, or NULL when empty.
func optJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

func scanMCPTask(r scanner) (*store.MCPTask, error) {
	var t store.MCPTask
	var result, input sql.NullString
	var truncated int
	var next, polled, cancelAt, nextCancel, lease, completed, notifyDue, notified sql.NullInt64
	var created, updated int64
	err := r.Scan(&t.ID, &t.UserID, &t.ThreadID, &t.RunID, &t.ToolCallID, &t.Server, &t.Toolset, &t.RemoteID,
		&t.SubmitTool, &t.StatusTool, &t.CancelTool, &t.Status, &result, &t.ResultPreview, &truncated, &t.Error,
		&input, &next, &polled, &t.LastPollError, &t.PollErrors, &t.PollAttempts,
		&cancelAt, &nextCancel, &t.CancelAttempts, &t.LeaseOwner, &lease,
		&created, &updated, &completed, &notifyDue, &t.NotifyAttempts, &t.NotifyError, &notified)
	if err != nil {
		return nil, err
	}
	if result.Valid {
		t.Result = json.RawMessage(result.String)
	}
	if input.Valid {
		t.InputRequired = json.RawMessage(input.String)
	}
	t.ResultTruncated = truncated != 0
	t.NextPollAt, t.LastPolledAt = optTime(next), optTime(polled)
	t.CancelRequestedAt, t.NextCancelAt = optTime(cancelAt), optTime(nextCancel)
	t.LeaseExpiresAt, t.CompletedAt = optTime(lease), optTime(completed)
	t.CreatedAt, t.UpdatedAt = fromNanos(created), fromNanos(updated)
	t.NotifyDueAt, t.NotifiedAt = optTime(notifyDue), optTime(notified)
	return &t, nil
}

func collectMCPTasks(rows *sql.Rows) ([]*store.MCPTask, error) {
	defer rows.Close()
	var out []*store.MCPTask
	for rows.Next() {
		t, err := scanMCPTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// CreateMCPTask implements store.MCPTasks.
func (s *Store) CreateMCPTask(ctx context.Context, t *store.MCPTask, limits store.MCPTaskLimits) error {
	if t.ID == "" {
		return errors.New("sqlite: task id is empty")
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now()
	}
	t.UpdatedAt = t.CreatedAt
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: create task: %w", err)
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM threads WHERE id = ?`, t.ThreadID).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("thread %q: %w", t.ThreadID, store.ErrNotFound)
		}
		return fmt.Errorf("sqlite: create task: %w", err)
	}
	if limits.MaxActive > 0 && store.MCPTaskActive(t.Status) {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM mcp_tasks WHERE thread_id = ? AND status IN `+mcpActive,
			t.ThreadID).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: create task: %w", err)
		}
		if n >= limits.MaxActive {
			return fmt.Errorf("thread %q has %d active tasks: %w", t.ThreadID, n, store.ErrMCPTaskLimit)
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO mcp_tasks (`+mcpTaskCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		t.ID, t.UserID, t.ThreadID, t.RunID, t.ToolCallID, t.Server, t.Toolset, t.RemoteID,
		t.SubmitTool, t.StatusTool, t.CancelTool, t.Status, optJSON(t.Result), t.ResultPreview, t.ResultTruncated, t.Error,
		optJSON(t.InputRequired), optNanos(t.NextPollAt), optNanos(t.LastPolledAt), t.LastPollError, t.PollErrors, t.PollAttempts,
		optNanos(t.CancelRequestedAt), optNanos(t.NextCancelAt), t.CancelAttempts, t.LeaseOwner, optNanos(t.LeaseExpiresAt),
		toNanos(t.CreatedAt), toNanos(t.UpdatedAt), optNanos(t.CompletedAt),
		optNanos(t.NotifyDueAt), t.NotifyAttempts, t.NotifyError, optNanos(t.NotifiedAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("task %q (server %q, remote id %q): %w", t.ID, t.Server, t.RemoteID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("sqlite: create task: %w", err)
	}
	if limits.KeepEnded > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM mcp_tasks WHERE thread_id = ? AND status IN `+mcpTerminal+`
			AND id NOT IN (SELECT id FROM mcp_tasks WHERE thread_id = ? AND status IN `+mcpTerminal+`
				ORDER BY created_at DESC, id DESC LIMIT ?)`, t.ThreadID, t.ThreadID, limits.KeepEnded); err != nil {
			return fmt.Errorf("sqlite: create task: prune: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: create task: %w", err)
	}
	return nil
}

// GetMCPTask implements store.MCPTasks.
func (s *Store) GetMCPTask(ctx context.Context, id string) (*store.MCPTask, error) {
	t, err := scanMCPTask(s.reader.QueryRowContext(ctx, `SELECT `+mcpTaskCols+` FROM mcp_tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("task %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get task: %w", err)
	}
	return t, nil
}

// ListMCPTasks implements store.MCPTasks.
func (s *Store) ListMCPTasks(ctx context.Context, q store.MCPTaskQuery) ([]*store.MCPTask, error) {
	query := `SELECT ` + mcpTaskCols + ` FROM mcp_tasks WHERE user_id = ? AND thread_id = ?`
	if q.ActiveOnly {
		query += ` AND status IN ` + mcpActive
	}
	query += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	rows, err := s.reader.QueryContext(ctx, query, q.UserID, q.ThreadID, store.MCPTaskListLimit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tasks: %w", err)
	}
	out, err := collectMCPTasks(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tasks: %w", err)
	}
	return out, nil
}

// RequestMCPTaskCancel implements store.MCPTasks.
func (s *Store) RequestMCPTaskCancel(ctx context.Context, id, userID, threadID string, at time.Time) (*store.MCPTask, error) {
	_, err := s.writer.ExecContext(ctx, `UPDATE mcp_tasks SET cancel_requested_at = ?, next_cancel_at = ?,
		lease_owner = '', lease_expires_at = NULL, updated_at = ?
		WHERE id = ? AND user_id = ? AND thread_id = ? AND status IN `+mcpActive+` AND cancel_requested_at IS NULL`,
		toNanos(at), toNanos(at), toNanos(at), id, userID, threadID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: cancel task: %w", err)
	}
	t, err := scanMCPTask(s.writer.QueryRowContext(ctx, `SELECT `+mcpTaskCols+` FROM mcp_tasks WHERE id = ? AND user_id = ? AND thread_id = ?`,
		id, userID, threadID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("task %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: cancel task: %w", err)
	}
	return t, nil
}

// ClaimMCPTasks implements store.MCPTasks. The writer connection is the
// only one that writes, so the select and the update of the claim are
// one atomic statement.
func (s *Store) ClaimMCPTasks(ctx context.Context, c store.MCPTaskClaim) ([]*store.MCPTask, error) {
	due, count := claimTerms(c)
	n := toNanos(c.Now)
	rows, err := s.writer.QueryContext(ctx, `UPDATE mcp_tasks SET lease_owner = ?, lease_expires_at = ?, `+count+`updated_at = ?
		WHERE id IN (SELECT id FROM mcp_tasks WHERE `+due+` <= ?
			AND (lease_expires_at IS NULL OR lease_expires_at < ?) ORDER BY `+dueColumn(c)+`, id LIMIT ?)
		RETURNING `+mcpTaskCols,
		c.Owner, toNanos(c.Now.Add(c.Lease)), n, n, n, max(c.Limit, 1))
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim tasks: %w", err)
	}
	out, err := collectMCPTasks(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim tasks: %w", err)
	}
	return out, nil
}

// claimTerms are the condition (ending in the due column, compared with
// the claim's time) and the attempt count of a claim of c's kind.
func claimTerms(c store.MCPTaskClaim) (due, count string) {
	switch {
	case c.Notify: // ended tasks too; failures are counted when settled
		return `notify_due_at IS NOT NULL AND notify_due_at`, ``
	case c.Cancel:
		return `status IN ` + mcpActive + ` AND cancel_requested_at IS NOT NULL AND next_cancel_at IS NOT NULL AND next_cancel_at`,
			`cancel_attempts = cancel_attempts + 1, `
	}
	return `status IN ` + mcpActive + ` AND cancel_requested_at IS NULL AND next_poll_at IS NOT NULL AND next_poll_at`,
		`poll_attempts = poll_attempts + 1, `
}

// dueColumn is the column a claim of c's kind takes the oldest of first.
func dueColumn(c store.MCPTaskClaim) string {
	switch {
	case c.Notify:
		return `notify_due_at`
	case c.Cancel:
		return `next_cancel_at`
	}
	return `next_poll_at`
}

// FinishMCPTask implements store.MCPTasks.
func (s *Store) FinishMCPTask(ctx context.Context, id, owner string, cancel bool, at time.Time, u store.MCPTaskUpdate) (bool, error) {
	var completed any
	if store.MCPTaskTerminal(u.Status) {
		completed = toNanos(at)
	}
	fence := ` AND cancel_requested_at IS NULL`
	if cancel {
		fence, u.NextPollAt = ``, time.Time{}
	}
	notice := store.MCPTaskNoticeStatus(u.Status)
	res, err := s.writer.ExecContext(ctx, `UPDATE mcp_tasks SET status = ?, result = ?, result_preview = ?, result_truncated = ?,
		error = ?, input_required = ?, next_poll_at = ?, last_polled_at = ?, last_poll_error = '', poll_errors = 0,
		next_cancel_at = CASE WHEN ? THEN NULL ELSE next_cancel_at END,
		notify_due_at = CASE WHEN ? AND status <> ? THEN ? ELSE notify_due_at END,
		notify_attempts = CASE WHEN ? AND status <> ? THEN 0 ELSE notify_attempts END,
		lease_owner = '', lease_expires_at = NULL, updated_at = ?, completed_at = ?
		WHERE id = ? AND lease_owner = ? AND lease_expires_at >= ? AND status IN `+mcpActive+fence,
		u.Status, optJSON(u.Result), u.ResultPreview, u.ResultTruncated, u.Error, optJSON(u.InputRequired),
		optNanos(u.NextPollAt), toNanos(at), cancel,
		notice, u.Status, toNanos(at), notice, u.Status,
		toNanos(at), completed, id, owner, toNanos(at))
	if err != nil {
		return false, fmt.Errorf("sqlite: finish task: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// FailMCPTask implements store.MCPTasks.
func (s *Store) FailMCPTask(ctx context.Context, id, owner string, cancel bool, at, next time.Time, f store.MCPTaskFailure) (bool, error) {
	set := `next_poll_at = ?, last_poll_error = ?, poll_errors = poll_errors + 1,
		notify_due_at = CASE WHEN ? > 0 AND poll_errors + 1 = ? THEN ? ELSE notify_due_at END,
		notify_attempts = CASE WHEN ? > 0 AND poll_errors + 1 = ? THEN 0 ELSE notify_attempts END`
	args := []any{toNanos(next), f.Error, f.NoticeAfter, f.NoticeAfter, toNanos(at), f.NoticeAfter, f.NoticeAfter}
	if cancel {
		set, args = `next_cancel_at = ?, error = ?`, args[:2]
	}
	res, err := s.writer.ExecContext(ctx, `UPDATE mcp_tasks SET `+set+`, lease_owner = '', lease_expires_at = NULL, updated_at = ?
		WHERE id = ? AND lease_owner = ? AND lease_expires_at >= ? AND status IN `+mcpActive,
		append(args, toNanos(at), id, owner, toNanos(at))...)
	if err != nil {
		return false, fmt.Errorf("sqlite: release task: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// SettleMCPTaskNotice implements store.MCPTasks.
func (s *Store) SettleMCPTaskNotice(ctx context.Context, id, owner string, at, next time.Time, errText string) (bool, error) {
	res, err := s.writer.ExecContext(ctx, `UPDATE mcp_tasks SET notify_due_at = ?,
		notify_attempts = CASE WHEN ? = '' THEN 0 ELSE notify_attempts + 1 END,
		notify_error = ?, notified_at = CASE WHEN ? = '' THEN ? ELSE notified_at END,
		lease_owner = '', lease_expires_at = NULL, updated_at = ?
		WHERE id = ? AND lease_owner = ? AND lease_expires_at >= ?`,
		optNanos(next), errText, errText, errText, toNanos(at), toNanos(at), id, owner, toNanos(at))
	if err != nil {
		return false, fmt.Errorf("sqlite: settle task notice: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
