package store

import (
	"context"
	"errors"
	"time"
)

// ErrActiveScheduledRun is returned by CreateScheduledTaskRun for a queued
// or running row of a task that already has one: at most one run of a
// task is active at a time, and the database is the arbiter.
var ErrActiveScheduledRun = errors.New("store: the scheduled task already has an active run")

// Scheduled task statuses, DeerFlow's.
const (
	TaskEnabled   = "enabled"
	TaskPaused    = "paused"
	TaskRunning   = "running" // claimed, or a once task whose run is going
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// Scheduled task run statuses, DeerFlow's. Queued and running are
// active.
const (
	TaskRunQueued      = "queued"
	TaskRunRunning     = "running"
	TaskRunSuccess     = "success"
	TaskRunFailed      = "failed"
	TaskRunSkipped     = "skipped"
	TaskRunInterrupted = "interrupted"
)

// ScheduledTask is a prompt run on a schedule (DeerFlow's scheduled_tasks
// row). Empty strings and zero times are SQL NULLs.
type ScheduledTask struct {
	ID     string
	UserID string
	// ThreadID is the thread every run uses in reuse_thread mode.
	ThreadID     string
	ContextMode  string
	AssistantID  string
	Title        string
	Prompt       string
	ScheduleType string
	ScheduleSpec map[string]any
	Timezone     string
	// Status is one of the Task* constants.
	Status        string
	OverlapPolicy string
	NextRunAt     time.Time
	LastRunAt     time.Time
	LastRunID     string
	LastThreadID  string
	LastError     string
	// LeaseOwner and LeaseExpiresAt reserve the task for one dispatcher
	// between its claim and its run's start.
	LeaseOwner     string
	LeaseExpiresAt time.Time
	RunCount       int
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// ScheduledTaskRun is one firing of a task (DeerFlow's
// scheduled_task_runs row).
type ScheduledTaskRun struct {
	ID       string
	TaskID   string
	ThreadID string
	// RunID is the agent run, once started.
	RunID        string
	ScheduledFor time.Time
	// Trigger is "scheduled" or "manual".
	Trigger    string
	Status     string
	Error      string
	StartedAt  time.Time
	FinishedAt time.Time
	CreatedAt  time.Time
}

// TaskQuery selects scheduled tasks; empty fields select all.
type TaskQuery struct {
	UserID   string
	ThreadID string
	Status   string
	// Limit caps the result; 0 means 1000.
	Limit int
}

// TaskEdit changes a task's fields; nil fields are kept. An edit never
// touches a task's lease.
type TaskEdit struct {
	ThreadID     *string
	ContextMode  *string
	Title        *string
	Prompt       *string
	ScheduleSpec map[string]any // nil keeps
	Timezone     *string
	Status       *string
	NextRunAt    *time.Time // a zero time clears
	LastError    *string
}

// ClaimRequest asks ClaimDueScheduledTasks for due tasks.
type ClaimRequest struct {
	Now   time.Time
	Owner string
	// LeaseFor is how long the claim reserves a task.
	LeaseFor time.Duration
	// MaxActive bounds, across every dispatcher sharing the store, the
	// active task runs plus the live claims without a run yet; the claim
	// takes at most MaxActive minus those.
	MaxActive int
}

// DispatchDone records the start (or failure to start) of a claimed or
// triggered task's run and releases its lease.
type DispatchDone struct {
	// Owner, when set, fences the write: it is refused (false) unless
	// the task's lease is still Owner's.
	Owner        string
	Status       string
	NextRunAt    time.Time
	LastRunAt    time.Time
	LastRunID    string
	LastThreadID string
	LastError    string
	CountRun     bool
	// ProtectTerminal keeps a completed, failed or cancelled status (and
	// its error) already written by the run's completion.
	ProtectTerminal bool
}

// TaskRunUpdate changes a task run; zero times are kept.
type TaskRunUpdate struct {
	Status     string
	RunID      string
	Error      string
	StartedAt  time.Time
	FinishedAt time.Time
	// ProtectTerminal keeps a terminal status and error already written
	// (only RunID and StartedAt are filled in when missing).
	ProtectTerminal bool
}

// ScheduledTasks persists scheduled tasks and their runs. Both stores
// implement it beside Store. Methods return ErrNotFound and ErrExists as
// documented; other errors are storage failures.
type ScheduledTasks interface {
	// CreateScheduledTask stores a new task (ErrExists for a duplicate
	// id); zero CreatedAt/UpdatedAt are set.
	CreateScheduledTask(ctx context.Context, t *ScheduledTask) error
	// GetScheduledTask returns a task by id.
	GetScheduledTask(ctx context.Context, id string) (*ScheduledTask, error)
	// ListScheduledTasks returns the tasks matching q, newest first.
	ListScheduledTasks(ctx context.Context, q TaskQuery) ([]*ScheduledTask, error)
	// EditScheduledTask changes a task and returns it.
	EditScheduledTask(ctx context.Context, id string, e TaskEdit) (*ScheduledTask, error)
	// DeleteScheduledTask removes a task and its runs.
	DeleteScheduledTask(ctx context.Context, id string) error

	// ClaimDueScheduledTasks atomically takes the due tasks (enabled with
	// next_run_at at or before Now and no live lease, or running with an
	// expired lease: a dispatcher that died between claim and start),
	// oldest first, within the MaxActive budget: each is marked running
	// and leased to Owner until Now+LeaseFor. Two dispatchers never
	// claim one task at once.
	ClaimDueScheduledTasks(ctx context.Context, r ClaimRequest) ([]*ScheduledTask, error)
	// LeaseScheduledTask reserves a task for a manual trigger, unless
	// another dispatcher holds a live lease on it (then nil, nil).
	LeaseScheduledTask(ctx context.Context, id, owner string, now time.Time, leaseFor time.Duration) (*ScheduledTask, error)
	// FinishScheduledDispatch records a dispatch and clears the lease; it
	// reports false when Owner no longer holds it (or the task is gone).
	FinishScheduledDispatch(ctx context.Context, id string, d DispatchDone) (bool, error)

	// CreateScheduledTaskRun stores a run of a task; an active (queued or
	// running) one for a task with an active run is ErrActiveScheduledRun.
	CreateScheduledTaskRun(ctx context.Context, r *ScheduledTaskRun) error
	// UpdateScheduledTaskRun changes a task run.
	UpdateScheduledTaskRun(ctx context.Context, id string, u TaskRunUpdate) error
	// ListScheduledTaskRuns returns a task's runs, newest first.
	ListScheduledTaskRuns(ctx context.Context, taskID string, limit, offset int) ([]*ScheduledTaskRun, error)
	// ActiveScheduledTaskRuns returns the queued and running runs (of
	// every task), oldest first, at most limit.
	ActiveScheduledTaskRuns(ctx context.Context, limit int) ([]*ScheduledTaskRun, error)
	// CountActiveScheduledTaskRuns counts the queued and running runs of
	// every task.
	CountActiveScheduledTaskRuns(ctx context.Context) (int, error)
	// PruneScheduledTaskRuns deletes a task's finished runs beyond its
	// newest keep runs and returns how many it deleted.
	PruneScheduledTaskRuns(ctx context.Context, taskID string, keep int) (int, error)
}

// TerminalTask reports whether a task status is final.
func TerminalTask(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}

// TerminalTaskRun reports whether a task run status is final.
func TerminalTaskRun(status string) bool {
	return status == TaskRunSuccess || status == TaskRunFailed || status == TaskRunSkipped || status == TaskRunInterrupted
}
