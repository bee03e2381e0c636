// Package store persists threads, their checkpoints and their runs.
//
// [Store] is the interface the agent loop and the gateway use; package
// store/sqlite is the default implementation (an embedded, pure-Go SQLite
// database under Antler's home), and a Postgres implementation satisfies
// the same interface so that several gateway replicas can share threads.
// Package store/storetest is the conformance suite every implementation
// runs.
//
// A checkpoint is the whole thread state after one step of the agent loop;
// the latest checkpoint of a thread is its current state.
package store

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
)

// Errors returned by every implementation (test with errors.Is).
var (
	// ErrNotFound: the thread, checkpoint or run does not exist (or
	// belongs to another user).
	ErrNotFound = errors.New("store: not found")
	// ErrExists: a thread or run with that id already exists.
	ErrExists = errors.New("store: already exists")
)

// Thread statuses, as LangGraph names them.
const (
	ThreadIdle        = "idle"
	ThreadBusy        = "busy"
	ThreadInterrupted = "interrupted"
	ThreadError       = "error"
)

// Run statuses, as DeerFlow's run manager names them.
const (
	RunPending     = "pending"
	RunRunning     = "running"
	RunSuccess     = "success"
	RunError       = "error"
	RunInterrupted = "interrupted"
	RunCancelled   = "cancelled"
)

// Thread is one conversation.
type Thread struct {
	ID     string
	UserID string
	// AgentName is the custom agent the thread was started with ("" for
	// the default agent).
	AgentName string
	// Status is one of the Thread* constants; "" is stored as idle.
	Status string
	// Title mirrors the state's title after each checkpoint.
	Title string
	// Metadata is free-form, JSON-encodable metadata.
	Metadata  map[string]any
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ThreadQuery selects threads. The zero value lists every thread of every
// user, newest first.
type ThreadQuery struct {
	// UserID, when set, keeps only that user's threads.
	UserID string
	// Status, when set, keeps only threads with that status.
	Status string
	// Metadata keeps threads whose metadata has every key with an equal
	// value (compared as JSON).
	Metadata map[string]any
	// Limit caps the result; 0 means 100.
	Limit  int
	Offset int
}

// Checkpoint is the thread state after one step.
type Checkpoint struct {
	// ID identifies the checkpoint within its thread; the store assigns
	// one when it is empty. IDs of one thread sort in creation order.
	ID       string
	ThreadID string
	// ParentID is the ID of the previous checkpoint ("" for the first).
	ParentID string
	RunID    string
	// Step counts the steps of the thread's history (input, model, tools).
	Step int
	// State is the thread's state. A state read from a store may share
	// its messages with the store's cache: append to them (appending
	// copies) or copy them, never write them in place.
	State *thread.State
	// KeptMessages, when positive, is the writer's promise that the
	// first KeptMessages messages of State are the parent checkpoint's
	// first KeptMessages messages, unchanged (the agent loop only appends
	// between its steps): a store then reuses their rows without
	// encoding them, and a step costs what it added, not the thread's
	// history. 0 means unknown: the store compares every message with
	// the parent's. Ignored when larger than either's messages. Not
	// stored.
	KeptMessages int
	// Metadata is free-form (source: "input" | "loop", writer, ...).
	Metadata  map[string]any
	CreatedAt time.Time
}

// Run is one agent run on a thread.
type Run struct {
	ID        string
	ThreadID  string
	UserID    string
	AgentName string
	// Status is one of the Run* constants.
	Status string
	// StopReason is the loop's stop reason once the run ended.
	StopReason string
	// Error is the failure text of a run with status error.
	Error    string
	Metadata map[string]any
	// Usage is the token usage recorded when the run ended; nil while it
	// runs and for runs stored before usage was recorded.
	Usage     *RunUsage
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RunUpdate changes a run's outcome fields.
type RunUpdate struct {
	Status     string
	StopReason string
	Error      string
	// Usage, when non-nil, replaces the run's recorded token usage; nil
	// leaves it unchanged.
	Usage *RunUsage
}

// The callers a run's token usage is split by (DeerFlow's run journal
// buckets).
const (
	// CallerLeadAgent is the lead agent's own model calls.
	CallerLeadAgent = "lead_agent"
	// CallerSubagent is the model calls of the run's subagent tasks.
	CallerSubagent = "subagent"
	// CallerMiddleware is the calls made beside the loop: the thread
	// title and context summarization.
	CallerMiddleware = "middleware"
)

// UnknownModel is the ByModel key of usage whose model has no name.
const UnknownModel = "unknown"

// RunUsage is the token usage of one run, as DeerFlow's run journal
// records it on the run row: the sum of every model call, its total split
// by caller, and the sum per model. The JSON names are DeerFlow's column
// names. The zero value is a run that used no tokens.
type RunUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
	// LeadAgentTokens, SubagentTokens and MiddlewareTokens split
	// TotalTokens by caller.
	LeadAgentTokens  int64 `json:"lead_agent_tokens"`
	SubagentTokens   int64 `json:"subagent_tokens"`
	MiddlewareTokens int64 `json:"middleware_tokens"`
	// ByModel sums the usage per models[] name (UnknownModel when the
	// call's model has no name).
	ByModel map[string]model.Usage `json:"token_usage_by_model,omitempty"`
	// ModelName is the lead agent's model ("" when unnamed), DeerFlow's
	// runs.model_name.
	ModelName string `json:"model_name,omitempty"`
}

// Add counts one model call (or one subagent task's cumulative usage)
// made by caller (a Caller* constant; anything else counts as the lead
// agent) on the model named modelName. As DeerFlow's journal does, a
// missing total is input plus output, and usage with no tokens is
// skipped.
func (u *RunUsage) Add(caller, modelName string, usage model.Usage) {
	total := usage.TotalTokens
	if total <= 0 {
		total = usage.InputTokens + usage.OutputTokens
	}
	if total <= 0 {
		return
	}
	usage.TotalTokens = total
	u.InputTokens += usage.InputTokens
	u.OutputTokens += usage.OutputTokens
	u.TotalTokens += total
	switch caller {
	case CallerSubagent:
		u.SubagentTokens += total
	case CallerMiddleware:
		u.MiddlewareTokens += total
	default:
		u.LeadAgentTokens += total
	}
	if modelName == "" {
		modelName = UnknownModel
	}
	if u.ByModel == nil {
		u.ByModel = map[string]model.Usage{}
	}
	u.ByModel[modelName] = u.ByModel[modelName].Add(usage)
}

// Clone returns a deep copy of u (nil for nil).
func (u *RunUsage) Clone() *RunUsage {
	if u == nil {
		return nil
	}
	c := *u
	c.ByModel = maps.Clone(u.ByModel)
	return &c
}

// Store persists threads, checkpoints and runs. Implementations are safe
// for concurrent use. Methods return ErrNotFound and ErrExists as
// documented; other errors are transport or storage failures.
type Store interface {
	// CreateThread stores a new thread; CreatedAt/UpdatedAt are set when
	// zero. A duplicate id is ErrExists.
	CreateThread(ctx context.Context, t *Thread) error
	// GetThread returns a thread by id.
	GetThread(ctx context.Context, id string) (*Thread, error)
	// UpdateThread replaces the status, title and metadata of a thread
	// and bumps UpdatedAt.
	UpdateThread(ctx context.Context, t *Thread) error
	// SearchThreads lists threads matching q, most recently updated first.
	SearchThreads(ctx context.Context, q ThreadQuery) ([]*Thread, error)
	// DeleteThread removes a thread with its checkpoints and runs.
	DeleteThread(ctx context.Context, id string) error

	// PutCheckpoint appends a checkpoint to an existing thread (ErrNotFound
	// otherwise), fills in ID and CreatedAt when empty, and bumps the
	// thread's UpdatedAt (and Title from the state). It must not keep
	// cp.State after returning: the caller goes on changing it.
	PutCheckpoint(ctx context.Context, cp *Checkpoint) error
	// LatestCheckpoint returns the newest checkpoint of a thread;
	// ErrNotFound when the thread has none.
	LatestCheckpoint(ctx context.Context, threadID string) (*Checkpoint, error)
	// GetCheckpoint returns one checkpoint by thread and id.
	GetCheckpoint(ctx context.Context, threadID, id string) (*Checkpoint, error)
	// ListCheckpoints returns a thread's checkpoints newest first; limit 0
	// means all, before (a checkpoint id) keeps only older ones.
	ListCheckpoints(ctx context.Context, threadID string, limit int, before string) ([]*Checkpoint, error)

	// CreateRun stores a new run of an existing thread.
	CreateRun(ctx context.Context, r *Run) error
	// UpdateRun records a run's outcome (and its token usage, when
	// u.Usage is set).
	UpdateRun(ctx context.Context, id string, u RunUpdate) error
	// GetRun returns a run by id.
	GetRun(ctx context.Context, id string) (*Run, error)
	// ListRuns returns a thread's runs, newest first.
	ListRuns(ctx context.Context, threadID string) ([]*Run, error)

	// Close releases the store.
	Close() error
}
