package mcptasks

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/tool"
)

// Bounds of the tasks of one thread (Antler's; DeerFlow has none).
const (
	// MaxActivePerThread is the most active tasks a thread may hold: a
	// submit beyond it is refused (and the remote task cancelled).
	MaxActivePerThread = 20
	// KeepEndedPerThread is how many ended tasks of a thread are kept;
	// older ones are deleted when a task is submitted.
	KeepEndedPerThread = 100
)

// Options configure New.
type Options struct {
	// Store persists the tasks. Either Store or OpenStore is required.
	Store store.MCPTasks
	// OpenStore opens the store on first use, for commands that may
	// never need it (tools list); its result is kept.
	OpenStore func() (store.MCPTasks, error)
	// MCP calls the servers' tools (mcptools.Manager). Required.
	MCP MCP
	// Config is the mcp_tasks section; the zero value is DeerFlow's
	// defaults (with Enabled as given).
	Config config.MCPTasks
	// Owner names this runtime in task leases; "" means host:pid:random.
	Owner string
	// Now is the clock of polls and leases; nil means time.Now. Runtimes
	// sharing a database judge leases by their own clocks, which must
	// agree within a fraction of lease_seconds (as DeerFlow's).
	Now func() time.Time
	// Logger receives poll failures; nil discards.
	Logger *slog.Logger
}

// Runtime submits, tracks and cancels the tasks of task toolsets. It is
// safe for concurrent use; Run polls until its context ends.
type Runtime struct {
	// immutable after New
	mcp    caller
	cfg    config.MCPTasks
	owner  string
	now    func() time.Time
	logger *slog.Logger
	open   func() (store.MCPTasks, error)

	mu       sync.Mutex
	store    store.MCPTasks // guarded by mu until opened, then immutable
	notifier Notifier       // guarded by mu; nil: notices wait
}

// New returns a runtime. It fails when neither Store nor OpenStore, or no
// MCP, is given.
func New(o Options) (*Runtime, error) {
	if o.MCP == nil || (o.Store == nil && o.OpenStore == nil) {
		return nil, errors.New("mcptasks: New needs a store and the MCP manager")
	}
	def := config.Default().MCPTasks
	c := o.Config
	c.PollIntervalSeconds = cmp.Or(c.PollIntervalSeconds, def.PollIntervalSeconds)
	c.LeaseSeconds = cmp.Or(c.LeaseSeconds, def.LeaseSeconds)
	c.MaxConcurrentPolls = cmp.Or(c.MaxConcurrentPolls, def.MaxConcurrentPolls)
	c.MaxPollBackoffSeconds = cmp.Or(c.MaxPollBackoffSeconds, def.MaxPollBackoffSeconds)
	c.InputRequiredPollIntervalSeconds = cmp.Or(c.InputRequiredPollIntervalSeconds, def.InputRequiredPollIntervalSeconds)
	c.TrackingDegradedAfterErrors = cmp.Or(c.TrackingDegradedAfterErrors, def.TrackingDegradedAfterErrors)
	c.MaxResultBytes = cmp.Or(c.MaxResultBytes, def.MaxResultBytes)
	c.ResultPreviewMaxChars = cmp.Or(c.ResultPreviewMaxChars, def.ResultPreviewMaxChars)
	r := &Runtime{mcp: caller{o.MCP}, cfg: c, owner: cmp.Or(o.Owner, store.NewOwnerID()), now: o.Now,
		logger: o.Logger, open: o.OpenStore, store: o.Store}
	if r.now == nil {
		r.now = time.Now
	}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// Config returns the runtime's mcp_tasks settings (defaults filled in).
func (r *Runtime) Config() config.MCPTasks { return r.cfg }

// tasks returns the store, opening it on first use.
func (r *Runtime) tasks() (store.MCPTasks, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store != nil {
		return r.store, nil
	}
	st, err := r.open()
	if err != nil {
		return nil, fmt.Errorf("mcptasks: open the task store: %w", err)
	}
	r.store = st
	return st, nil
}

// clock returns the runtime's time at the stores' precision.
func (r *Runtime) clock() time.Time { return r.now().UTC().Truncate(time.Microsecond) }

// Toolset is one task toolset of one server.
type Toolset struct {
	Server string
	config.TaskToolset
}

// Submitted is what the submit tool answers the model.
type Submitted struct {
	TaskID   string `json:"task_id"`
	TaskName string `json:"task_name"`
	Status   string `json:"status"`
	Message  string `json:"message"`
}

// Submit calls the toolset's submit tool with the model's arguments and
// stores the task before answering, so that it is tracked even if this
// process stops at once. What the model can act on (a thread at its
// bound, the server refusing the arguments) is an error result; a store
// that fails is a Go error, after the remote task was cancelled.
func (r *Runtime) Submit(ctx context.Context, call *tool.Call, ts Toolset, args any) (*tool.Result, error) {
	userID, threadID := callUser(call), callThread(call)
	if threadID == "" {
		return tool.Errorf("background task %q needs a thread: this call has none", ts.Name), nil
	}
	st, err := r.tasks()
	if err != nil {
		return nil, err
	}
	active, err := st.ListMCPTasks(ctx, store.MCPTaskQuery{UserID: userID, ThreadID: threadID, ActiveOnly: true, Limit: MaxActivePerThread})
	if err != nil {
		return nil, err
	}
	if len(active) >= MaxActivePerThread {
		return tool.Errorf("this chat already has %d active background tasks (the most allowed); wait for one to finish or cancel one with cancel_background_task", len(active)), nil
	}
	res, err := r.mcp.call(ctx, ts.Server, ts.SubmitTool, userID, threadID, args)
	if err != nil {
		return nil, err
	}
	sc, err := structured(res, ts.SubmitTool)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	remoteID, err := parseSubmit(sc, ts.SubmitTool)
	now := r.clock()
	t := &store.MCPTask{ID: "mcp-task-" + randomHex(16), UserID: userID, ThreadID: threadID, RunID: call.RunID, ToolCallID: call.ID,
		Server: ts.Server, Toolset: ts.Name, RemoteID: remoteID,
		SubmitTool: ts.SubmitTool, StatusTool: ts.StatusTool, CancelTool: ts.CancelTool,
		Status: store.MCPTaskSubmitted, NextPollAt: now.Add(r.cfg.PollInterval()), CreatedAt: now}
	if err != nil {
		if remoteID != "" { // started, but its id cannot be stored
			r.cancelUntracked(ctx, t)
		}
		return tool.Errorf("%v", err), nil
	}
	err = st.CreateMCPTask(ctx, t, store.MCPTaskLimits{MaxActive: MaxActivePerThread, KeepEnded: KeepEndedPerThread})
	switch {
	case errors.Is(err, store.ErrExists):
		// The handle is tracked already: cancelling it would stop that task.
		return tool.Errorf("MCP server '%s' returned the id of a task this user already tracks", ts.Server), nil
	case err != nil:
		r.cancelUntracked(ctx, t)
		if errors.Is(err, store.ErrMCPTaskLimit) {
			return tool.Errorf("this chat already has %d active background tasks (the most allowed); the new one was cancelled", MaxActivePerThread), nil
		}
		return nil, fmt.Errorf("mcptasks: store task %q: %w", ts.Name, err)
	}
	r.logger.Info("MCP background task submitted", "task_id", t.ID, "server", ts.Server, "toolset", ts.Name, "thread_id", threadID)
	return tool.JSON(Submitted{TaskID: t.ID, TaskName: ts.Name, Status: t.Status, Message: "Task is running in the background."})
}

// cancelUntracked cancels a remote task that could not be stored, so
// that nothing runs that nobody tracks.
func (r *Runtime) cancelUntracked(ctx context.Context, t *store.MCPTask) {
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.Lease())
	defer stop()
	if _, err := r.remote(ctx, t, true); err != nil {
		r.logger.Error("cannot cancel an MCP task that could not be stored; it may run untracked",
			"server", t.Server, "toolset", t.Toolset, "err", err)
	}
}

// List returns a thread's tasks, newest first (limit: store.MCPTaskListLimit).
func (r *Runtime) List(ctx context.Context, userID, threadID string, activeOnly bool, limit int) ([]*store.MCPTask, error) {
	st, err := r.tasks()
	if err != nil {
		return nil, err
	}
	return st.ListMCPTasks(ctx, store.MCPTaskQuery{UserID: userID, ThreadID: threadID, ActiveOnly: activeOnly, Limit: limit})
}

// MatchError says why no single task matched a cancellation; its text is
// for the model.
type MatchError struct{ Msg string }

func (e *MatchError) Error() string { return e.Msg }

// Cancel asks to cancel the one active task of the thread named by task
// (its id, or its toolset name without regard to case); with task "" the
// thread must have exactly one active task. The cancellation itself is
// made by the poller, retried until the server confirms it. No match, or
// more than one, is a *MatchError.
func (r *Runtime) Cancel(ctx context.Context, userID, threadID, task string) (*store.MCPTask, error) {
	active, err := r.List(ctx, userID, threadID, true, MaxActivePerThread)
	if err != nil {
		return nil, err
	}
	var matches []*store.MCPTask
	want := strings.TrimSpace(task)
	for _, t := range active {
		if want == "" || t.ID == want || strings.EqualFold(t.Toolset, want) {
			matches = append(matches, t)
		}
	}
	switch {
	case len(matches) == 0:
		return nil, &MatchError{Msg: "No active background task matches this request."}
	case len(matches) > 1:
		var names []string
		for _, t := range matches[:min(len(matches), 5)] {
			names = append(names, cmp.Or(t.Toolset, t.ID)+" ("+t.ID+")")
		}
		return nil, &MatchError{Msg: "More than one active background task matches; name one by its task_id: " + strings.Join(names, ", ")}
	}
	st, err := r.tasks()
	if err != nil {
		return nil, err
	}
	t, err := st.RequestMCPTaskCancel(ctx, matches[0].ID, userID, threadID, r.clock())
	if errors.Is(err, store.ErrNotFound) {
		return nil, &MatchError{Msg: "The selected background task no longer exists."}
	}
	return t, err
}

func callUser(c *tool.Call) string {
	if c.UserID != "" {
		return c.UserID
	}
	return cmp.Or(c.ContextString("user_id"), "default")
}

func callThread(c *tool.Call) string {
	if c.ThreadID != "" {
		return c.ThreadID
	}
	return c.ContextString("thread_id")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Get returns a task of a user's thread; store.ErrNotFound when the task
// does not exist or belongs to another user or thread.
func (r *Runtime) Get(ctx context.Context, userID, threadID, id string) (*store.MCPTask, error) {
	st, err := r.tasks()
	if err != nil {
		return nil, err
	}
	t, err := st.GetMCPTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.UserID != userID || t.ThreadID != threadID {
		return nil, fmt.Errorf("task %q: %w", id, store.ErrNotFound)
	}
	return t, nil
}

// CancelID asks to cancel the task id of a user's thread (an ended task,
// or one already asked, is returned unchanged); store.ErrNotFound when it
// is not theirs.
func (r *Runtime) CancelID(ctx context.Context, userID, threadID, id string) (*store.MCPTask, error) {
	st, err := r.tasks()
	if err != nil {
		return nil, err
	}
	return st.RequestMCPTaskCancel(ctx, id, userID, threadID, r.clock())
}
