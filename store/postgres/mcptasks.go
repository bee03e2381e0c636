package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/antlerhq/antler/store"
)

// migrationMCPTasks creates the MCP background tasks (store.MCPTasks);
// a thread's tasks go with it. IF NOT EXISTS: the tests that turn a
// schema back into an older version leave newer tables in place.
const migrationMCPTasks = `CREATE TABLE IF NOT EXISTS antler_mcp_tasks (
		id                  text PRIMARY KEY,
		user_id             text NOT NULL,
		thread_id           text NOT NULL REFERENCES antler_threads (id) ON DELETE CASCADE,
		run_id              text NOT NULL DEFAULT '',
		tool_call_id        text NOT NULL DEFAULT '',
		server              text NOT NULL,
		toolset             text NOT NULL,
		remote_id           text NOT NULL,
		submit_tool         text NOT NULL,
		status_tool         text NOT NULL,
		cancel_tool         text NOT NULL,
		status              text NOT NULL,
		result              json, -- json, not jsonb: kept byte for byte
		result_preview      text NOT NULL DEFAULT '',
		result_truncated    boolean NOT NULL DEFAULT false,
		error               text NOT NULL DEFAULT '',
		input_required      json,
		next_poll_at        timestamptz,
		last_polled_at      timestamptz,
		last_poll_error     text NOT NULL DEFAULT '',
		poll_errors         integer NOT NULL DEFAULT 0,
		poll_attempts       integer NOT NULL DEFAULT 0,
		cancel_requested_at timestamptz,
		next_cancel_at      timestamptz,
		cancel_attempts     integer NOT NULL DEFAULT 0,
		lease_owner         text NOT NULL DEFAULT '',
		lease_expires_at    timestamptz,
		created_at          timestamptz NOT NULL,
		updated_at          timestamptz NOT NULL,
		completed_at        timestamptz,
		UNIQUE (user_id, server, remote_id));
	CREATE INDEX IF NOT EXISTS antler_mcp_tasks_thread ON antler_mcp_tasks (thread_id, user_id, created_at DESC);
	CREATE INDEX IF NOT EXISTS antler_mcp_tasks_due ON antler_mcp_tasks (next_poll_at)
		WHERE status IN ('submitted', 'working', 'input_required');`

// migrationMCPTaskNotices adds the notices of a task's changes to its
// thread (IF NOT EXISTS, as migrationMCPTasks).
const migrationMCPTaskNotices = `ALTER TABLE antler_mcp_tasks
		ADD COLUMN IF NOT EXISTS notify_due_at timestamptz,
		ADD COLUMN IF NOT EXISTS notify_attempts integer NOT NULL DEFAULT 0,
		ADD COLUMN IF NOT EXISTS notify_error text NOT NULL DEFAULT '',
		ADD COLUMN IF NOT EXISTS notified_at timestamptz;
	CREATE INDEX IF NOT EXISTS antler_mcp_tasks_notify ON antler_mcp_tasks (notify_due_at)
		WHERE notify_due_at IS NOT NULL;`

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

// optTime is t, or NULL for the zero time.
func optTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

func fromOpt(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// optJSON is raw as JSON text, or NULL when empty.
func optJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

func scanMCPTask(r pgx.Row) (*store.MCPTask, error) {
	var t store.MCPTask
	var result, input *string
	var next, polled, cancelAt, nextCancel, lease, completed, notifyDue, notified *time.Time
	err := r.Scan(&t.ID, &t.UserID, &t.ThreadID, &t.RunID, &t.ToolCallID, &t.Server, &t.Toolset, &t.RemoteID,
		&t.SubmitTool, &t.StatusTool, &t.CancelTool, &t.Status, &result, &t.ResultPreview, &t.ResultTruncated, &t.Error,
		&input, &next, &polled, &t.LastPollError, &t.PollErrors, &t.PollAttempts,
		&cancelAt, &nextCancel, &t.CancelAttempts, &t.LeaseOwner, &lease,
		&t.CreatedAt, &t.UpdatedAt, &completed, &notifyDue, &t.NotifyAttempts, &t.NotifyError, &notified)
	if err != nil {
		return nil, err
	}
	if result != nil {
		t.Result = json.RawMessage(*result)
	}
	if input != nil {
		t.InputRequired = json.RawMessage(*input)
	}
	t.NextPollAt, t.LastPolledAt = fromOpt(next), fromOpt(polled)
	t.CancelRequestedAt, t.NextCancelAt = fromOpt(cancelAt), fromOpt(nextCancel)
	t.LeaseExpiresAt, t.CompletedAt = fromOpt(lease), fromOpt(completed)
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	t.NotifyDueAt, t.NotifiedAt = fromOpt(notifyDue), fromOpt(notified)
	return &t, nil
}

func (s *Store) queryMCPTasks(ctx context.Context, op, query string, args ...any) ([]*store.MCPTask, error) {
	var out []*store.MCPTask
	err := s.retry.do(ctx, op, func(ctx context.Context, _ int) error {
		rows, err := s.pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.MCPTask, error) { return scanMCPTask(r) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", op, err)
	}
	return out, nil
}

// CreateMCPTask implements store.MCPTasks. The thread's row is locked
// while its active tasks are counted, so that replicas creating tasks on
// one thread at once cannot pass the bound together.
func (s *Store) CreateMCPTask(ctx context.Context, t *store.MCPTask, limits store.MCPTaskLimits) error {
	if t.ID == "" {
		return errors.New("postgres: task id is empty")
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now()
	}
	t.UpdatedAt = t.CreatedAt
	return s.retry.do(ctx, "create task", func(ctx context.Context, attempt int) error {
		err := s.createMCPTask(ctx, t, limits)
		if errors.Is(err, store.ErrExists) && attempt > 1 {
			// An earlier attempt committed before its connection died.
			if got, gerr := s.GetMCPTask(ctx, t.ID); gerr == nil && got.RemoteID == t.RemoteID && got.Server == t.Server {
				return nil
			}
		}
		return err
	})
}

func (s *Store) createMCPTask(ctx context.Context, t *store.MCPTask, limits store.MCPTaskLimits) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var one int
	err = tx.QueryRow(ctx, `SELECT 1 FROM antler_threads WHERE id = $1 FOR UPDATE`, t.ThreadID).Scan(&one)
	if isNoRows(err) {
		return fmt.Errorf("thread %q: %w", t.ThreadID, store.ErrNotFound)
	}
	if err != nil {
		return err
	}
	if limits.MaxActive > 0 && store.MCPTaskActive(t.Status) {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM antler_mcp_tasks WHERE thread_id = $1 AND status IN `+mcpActive,
			t.ThreadID).Scan(&n); err != nil {
			return err
		}
		if n >= limits.MaxActive {
			return fmt.Errorf("thread %q has %d active tasks: %w", t.ThreadID, n, store.ErrMCPTaskLimit)
		}
	}
	_, err = tx.Exec(ctx, `INSERT INTO antler_mcp_tasks (`+mcpTaskCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
		$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30,
		$31, $32, $33, $34)`,
		t.ID, t.UserID, t.ThreadID, t.RunID, t.ToolCallID, t.Server, t.Toolset, t.RemoteID,
		t.SubmitTool, t.StatusTool, t.CancelTool, t.Status, optJSON(t.Result), t.ResultPreview, t.ResultTruncated, t.Error,
		optJSON(t.InputRequired), optTime(t.NextPollAt), optTime(t.LastPolledAt), t.LastPollError, t.PollErrors, t.PollAttempts,
		optTime(t.CancelRequestedAt), optTime(t.NextCancelAt), t.CancelAttempts, t.LeaseOwner, optTime(t.LeaseExpiresAt),
		t.CreatedAt, t.UpdatedAt, optTime(t.CompletedAt),
		optTime(t.NotifyDueAt), t.NotifyAttempts, t.NotifyError, optTime(t.NotifiedAt))
	if pgCode(err) == uniqueViolation {
		return fmt.Errorf("task %q (server %q, remote id %q): %w", t.ID, t.Server, t.RemoteID, store.ErrExists)
	}
	if err != nil {
		return err
	}
	if limits.KeepEnded > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM antler_mcp_tasks WHERE thread_id = $1 AND status IN `+mcpTerminal+`
			AND id NOT IN (SELECT id FROM antler_mcp_tasks WHERE thread_id = $1 AND status IN `+mcpTerminal+`
				ORDER BY created_at DESC, id DESC LIMIT $2)`, t.ThreadID, limits.KeepEnded); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// GetMCPTask implements store.MCPTasks.
func (s *Store) GetMCPTask(ctx context.Context, id string) (*store.MCPTask, error) {
	out, err := s.queryMCPTasks(ctx, "get task", `SELECT `+mcpTaskCols+` FROM antler_mcp_tasks WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("task %q: %w", id, store.ErrNotFound)
	}
	return out[0], nil
}

// ListMCPTasks implements store.MCPTasks.
func (s *Store) ListMCPTasks(ctx context.Context, q store.MCPTaskQuery) ([]*store.MCPTask, error) {
	query := `SELECT ` + mcpTaskCols + ` FROM antler_mcp_tasks WHERE user_id = $1 AND thread_id = $2`
	if q.ActiveOnly {
		query += ` AND status IN ` + mcpActive
	}
	query += ` ORDER BY created_at DESC, id DESC LIMIT $3`
	return s.queryMCPTasks(ctx, "list tasks", query, q.UserID, q.ThreadID, store.MCPTaskListLimit(q.Limit))
}

// RequestMCPTaskCancel implements store.MCPTasks.
func (s *Store) RequestMCPTaskCancel(ctx context.Context, id, userID, threadID string, at time.Time) (*store.MCPTask, error) {
	out, err := s.queryMCPTasks(ctx, "cancel task", `WITH asked AS (
		UPDATE antler_mcp_tasks SET cancel_requested_at = $4, next_cancel_at = $4, lease_owner = '', lease_expires_at = NULL, updated_at = $4
		WHERE id = $1 AND user_id = $2 AND thread_id = $3 AND status IN `+mcpActive+` AND cancel_requested_at IS NULL
		RETURNING `+mcpTaskCols+`)
	SELECT `+mcpTaskCols+` FROM asked
	UNION ALL SELECT `+mcpTaskCols+` FROM antler_mcp_tasks
		WHERE id = $1 AND user_id = $2 AND thread_id = $3 AND NOT EXISTS (SELECT 1 FROM asked)`,
		id, userID, threadID, at)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("task %q: %w", id, store.ErrNotFound)
	}
	return out[0], nil
}

// ClaimMCPTasks implements store.MCPTasks: the due rows are locked with
// SKIP LOCKED, so replicas claiming at once take disjoint tasks.
func (s *Store) ClaimMCPTasks(ctx context.Context, c store.MCPTaskClaim) ([]*store.MCPTask, error) {
	due, count, order := `status IN `+mcpActive+` AND cancel_requested_at IS NULL AND next_poll_at IS NOT NULL AND next_poll_at <= $3`,
		`poll_attempts = poll_attempts + 1, `, `next_poll_at`
	switch {
	case c.Notify: // ended tasks too; failures are counted when settled
		due, count, order = `notify_due_at IS NOT NULL AND notify_due_at <= $3`, ``, `notify_due_at`
	case c.Cancel:
		due, count, order = `status IN `+mcpActive+` AND cancel_requested_at IS NOT NULL AND next_cancel_at IS NOT NULL AND next_cancel_at <= $3`,
			`cancel_attempts = cancel_attempts + 1, `, `next_cancel_at`
	}
	return s.queryMCPTasks(ctx, "claim tasks", `UPDATE antler_mcp_tasks SET lease_owner = $1, lease_expires_at = $2,
		`+count+`updated_at = $3
		WHERE id IN (SELECT id FROM antler_mcp_tasks WHERE `+due+`
			AND (lease_expires_at IS NULL OR lease_expires_at < $3)
			ORDER BY `+order+`, id LIMIT $4 FOR UPDATE SKIP LOCKED)
		RETURNING `+mcpTaskCols,
		c.Owner, c.Now.Add(c.Lease), c.Now, max(c.Limit, 1))
}

// FinishMCPTask implements store.MCPTasks.
func (s *Store) FinishMCPTask(ctx context.Context, id, owner string, cancel bool, at time.Time, u store.MCPTaskUpdate) (bool, error) {
	var completed any
	if store.MCPTaskTerminal(u.Status) {
		completed = at
	}
	fence := ` AND cancel_requested_at IS NULL`
	if cancel {
		fence, u.NextPollAt = ``, time.Time{}
	}
	return s.execOne(ctx, "finish task", `UPDATE antler_mcp_tasks SET status = $1, result = $2, result_preview = $3,
		result_truncated = $4, error = $5, input_required = $6, next_poll_at = $7, last_polled_at = $8,
		last_poll_error = '', poll_errors = 0,
		next_cancel_at = CASE WHEN $9 THEN NULL ELSE next_cancel_at END,
		notify_due_at = CASE WHEN $13 AND status <> $1 THEN $8 ELSE notify_due_at END,
		notify_attempts = CASE WHEN $13 AND status <> $1 THEN 0 ELSE notify_attempts END,
		lease_owner = '', lease_expires_at = NULL, updated_at = $8, completed_at = $10
		WHERE id = $11 AND lease_owner = $12 AND lease_expires_at >= $8 AND status IN `+mcpActive+fence,
		u.Status, optJSON(u.Result), u.ResultPreview, u.ResultTruncated, u.Error, optJSON(u.InputRequired),
		optTime(u.NextPollAt), at, cancel, completed, id, owner, store.MCPTaskNoticeStatus(u.Status))
}

// FailMCPTask implements store.MCPTasks.
func (s *Store) FailMCPTask(ctx context.Context, id, owner string, cancel bool, at, next time.Time, f store.MCPTaskFailure) (bool, error) {
	set := `next_poll_at = $1, last_poll_error = $2, poll_errors = poll_errors + 1,
		notify_due_at = CASE WHEN $6::integer > 0 AND poll_errors + 1 = $6::integer THEN $3 ELSE notify_due_at END,
		notify_attempts = CASE WHEN $6::integer > 0 AND poll_errors + 1 = $6::integer THEN 0 ELSE notify_attempts END`
	args := []any{next, f.Error, at, id, owner, f.NoticeAfter}
	if cancel {
		set, args = `next_cancel_at = $1, error = $2`, args[:5]
	}
	return s.execOne(ctx, "release task", `UPDATE antler_mcp_tasks SET `+set+`, lease_owner = '', lease_expires_at = NULL, updated_at = $3
		WHERE id = $4 AND lease_owner = $5 AND lease_expires_at >= $3 AND status IN `+mcpActive,
		args...)
}

// SettleMCPTaskNotice implements store.MCPTasks.
func (s *Store) SettleMCPTaskNotice(ctx context.Context, id, owner string, at, next time.Time, errText string) (bool, error) {
	return s.execOne(ctx, "settle task notice", `UPDATE antler_mcp_tasks SET notify_due_at = $1,
		notify_attempts = CASE WHEN $2 = '' THEN 0 ELSE notify_attempts + 1 END,
		notify_error = $2, notified_at = CASE WHEN $2 = '' THEN $3 ELSE notified_at END,
		lease_owner = '', lease_expires_at = NULL, updated_at = $3
		WHERE id = $4 AND lease_owner = $5 AND lease_expires_at >= $3`,
		optTime(next), errText, at, id, owner)
}

// execOne runs a fenced update and reports whether it changed the row.
func (s *Store) execOne(ctx context.Context, op, query string, args ...any) (bool, error) {
	var changed bool
	err := s.retry.do(ctx, op, func(ctx context.Context, _ int) error {
		tag, err := s.pool.Exec(ctx, query, args...)
		changed = err == nil && tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("postgres: %s: %w", op, err)
	}
	return changed, nil
}
