package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// The statuses of an MCP background task (DeerFlow's TaskStatus). The
// first three are active: the task is polled until it leaves them.
const (
	MCPTaskSubmitted     = "submitted"
	MCPTaskWorking       = "working"
	MCPTaskInputRequired = "input_required"
	MCPTaskCompleted     = "completed"
	MCPTaskFailed        = "failed"
	MCPTaskCancelled     = "cancelled"
)

// MCPTaskActive reports whether status is one of the active statuses.
func MCPTaskActive(status string) bool {
	return status == MCPTaskSubmitted || status == MCPTaskWorking || status == MCPTaskInputRequired
}

// MCPTaskTerminal reports whether status is completed, failed or
// cancelled.
func MCPTaskTerminal(status string) bool {
	return status == MCPTaskCompleted || status == MCPTaskFailed || status == MCPTaskCancelled
}

// ErrMCPTaskLimit is returned by CreateMCPTask when the thread already has
// the most active tasks allowed.
var ErrMCPTaskLimit = errors.New("store: too many active background tasks on this thread")

// MCPTask is one long-running task of an MCP server's submit/status/cancel
// toolset (extensions_config.json's task_toolsets), tracked after the run
// that submitted it has ended. Times are UTC; a zero time is "none".
type MCPTask struct {
	// ID is Antler's id of the task, the one the model sees.
	ID       string
	UserID   string
	ThreadID string
	// RunID and ToolCallID name the call that submitted it.
	RunID, ToolCallID string
	// Server is the MCP server's name in the extensions file, Toolset the
	// toolset's name (the task name the model sees), RemoteID the
	// server's own task id (never shown to the model).
	Server, Toolset, RemoteID string
	// SubmitTool, StatusTool and CancelTool are the server's raw tool
	// names of the toolset.
	SubmitTool, StatusTool, CancelTool string
	// Status is one of the MCPTask* constants.
	Status string
	// Result is the task's JSON result; nil when it has none or when it
	// was larger than the runtime's bound (ResultTruncated, and
	// ResultPreview holds its beginning).
	Result          json.RawMessage
	ResultPreview   string
	ResultTruncated bool
	// Error is the failure text of a failed task, or of the last failed
	// cancellation attempt.
	Error string
	// InputRequired is the server's question while the status is
	// input_required.
	InputRequired json.RawMessage
	// NextPollAt is when the task is due for its next status poll (zero:
	// never again).
	NextPollAt   time.Time
	LastPolledAt time.Time
	// LastPollError and PollErrors are the last failed poll's error and
	// the count of failures in a row; PollAttempts counts every claim.
	LastPollError string
	PollErrors    int
	PollAttempts  int
	// CancelRequestedAt is when cancellation was asked (zero: never);
	// NextCancelAt when the next attempt at the server is due.
	CancelRequestedAt time.Time
	NextCancelAt      time.Time
	CancelAttempts    int
	// LeaseOwner holds the task (for a poll or a cancellation) until
	// LeaseExpiresAt; another runtime may claim it after that.
	LeaseOwner     string
	LeaseExpiresAt time.Time
	// NotifyDueAt is when the thread is due to be told of the task's
	// last change (an end, or a question; zero: nothing to tell);
	// NotifyAttempts counts the failed attempts at it, NotifyError is
	// the last failure, NotifiedAt the last delivery.
	NotifyDueAt    time.Time
	NotifyAttempts int
	NotifyError    string
	NotifiedAt     time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
	CompletedAt    time.Time
}

// MCPTaskQuery selects one thread's tasks of one user, newest first.
type MCPTaskQuery struct {
	UserID, ThreadID string
	// ActiveOnly keeps the tasks still active.
	ActiveOnly bool
	// Limit caps the result; 0 means 50, and more than 500 is 500.
	Limit int
}

// MCPTaskLimits bound the tasks a thread may hold, for CreateMCPTask.
type MCPTaskLimits struct {
	// MaxActive is the most active tasks of the thread (the new one
	// included); 0 means no bound.
	MaxActive int
	// KeepEnded is how many ended tasks of the thread are kept: older
	// ones are deleted when a task is created; 0 means all.
	KeepEnded int
}

// MCPTaskClaim asks ClaimMCPTasks for due work.
type MCPTaskClaim struct {
	// Cancel claims tasks whose cancellation is due instead of tasks
	// whose poll is due; Notify, tasks whose notice is due (ended tasks
	// included).
	Cancel, Notify bool
	// Owner is the claiming runtime's name, Now the time the claim is
	// judged at, Lease how long the claim holds.
	Owner string
	Now   time.Time
	Lease time.Duration
	// Limit is the most tasks claimed (at least 1).
	Limit int
}

// MCPTaskUpdate is the outcome of one poll or cancellation at the server.
type MCPTaskUpdate struct {
	Status          string
	Result          json.RawMessage
	ResultPreview   string
	ResultTruncated bool
	Error           string
	InputRequired   json.RawMessage
	// NextPollAt is the next poll of a still active task.
	NextPollAt time.Time
}

// MCPTaskFailure is a failed attempt at a task's server.
type MCPTaskFailure struct {
	// Error is the failure's text.
	Error string
	// NoticeAfter, for a poll, is the count of failures in a row that
	// makes a notice due (the thread is told that tracking the task
	// degraded); 0 makes none.
	NoticeAfter int
}

// MCPTasks persists MCP background tasks. Claims are leases: a claimed
// task is held by its owner until the lease expires, no other owner can
// claim it meanwhile (across processes sharing the database), and the
// owner's Finish and Fail calls are refused (false) once its lease has
// expired or the task was cancelled, so that a slow runtime never
// overwrites the work of the one that took over.
type MCPTasks interface {
	// CreateMCPTask stores a new task of an existing thread (ErrNotFound
	// otherwise); ErrExists when the id, or the user's server and remote
	// id, is already stored; ErrMCPTaskLimit when the thread holds
	// limits.MaxActive active tasks already and t is active.
	CreateMCPTask(ctx context.Context, t *MCPTask, limits MCPTaskLimits) error
	// GetMCPTask returns a task by id.
	GetMCPTask(ctx context.Context, id string) (*MCPTask, error)
	// ListMCPTasks returns the tasks q selects.
	ListMCPTasks(ctx context.Context, q MCPTaskQuery) ([]*MCPTask, error)
	// RequestMCPTaskCancel records that the user asked to cancel a task
	// of their thread (ErrNotFound otherwise) and releases its poll
	// lease; an ended task, or one already asked, is returned unchanged.
	RequestMCPTaskCancel(ctx context.Context, id, userID, threadID string, now time.Time) (*MCPTask, error)
	// ClaimMCPTasks leases the due tasks (oldest due first) to c.Owner.
	ClaimMCPTasks(ctx context.Context, c MCPTaskClaim) ([]*MCPTask, error)
	// FinishMCPTask applies an update the owner got from the server (a
	// poll's, or with cancel a cancellation's) and releases the lease.
	FinishMCPTask(ctx context.Context, id, owner string, cancel bool, now time.Time, u MCPTaskUpdate) (bool, error)
	// FailMCPTask records a failed attempt (a poll's, or with cancel a
	// cancellation's), schedules the next one at next and releases the
	// lease.
	FailMCPTask(ctx context.Context, id, owner string, cancel bool, now, next time.Time, f MCPTaskFailure) (bool, error)
	// SettleMCPTaskNotice records the outcome of a notice the owner
	// claimed: delivered (next zero and errText ""), failed and due
	// again at next, or given up (next zero, errText set); it releases
	// the lease. A change of status to an ended one or input_required
	// (FinishMCPTask) makes a notice due at once.
	SettleMCPTaskNotice(ctx context.Context, id, owner string, now, next time.Time, errText string) (bool, error)
}

// MCPTaskNoticeStatus reports whether a task in status is one the thread
// is told about (DeerFlow's attention statuses).
func MCPTaskNoticeStatus(status string) bool {
	return status == MCPTaskInputRequired || MCPTaskTerminal(status)
}

// MCPTaskListLimit is the number of tasks a query with limit n returns at
// most: 50 for 0, and never more than 500.
func MCPTaskListLimit(n int) int {
	if n <= 0 {
		return 50
	}
	return min(n, 500)
}
