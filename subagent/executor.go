package subagent

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// Defaults of Options.
const (
	// defaultPollGrace is how long past its timeout a task may run before
	// the waiting task tool gives up on it (DeerFlow's polling safety net
	// of timeout + 60 s).
	defaultPollGrace = 60 * time.Second
	// defaultCancelWait is how long Delegate waits for a cancelled task
	// to stop before returning.
	defaultCancelWait = 5 * time.Second
)

// ErrClosed is returned by Delegate after Close.
var ErrClosed = errors.New("subagent: executor closed")

// ModelSource returns the chat model of a models[] entry by name.
type ModelSource func(ctx context.Context, name string) (model.ChatModel, error)

// Options configure an Executor. Assembler is required; every other zero
// value is documented.
type Options struct {
	// Assembler assembles each subagent's tools, always with
	// SubagentEnabled false so that task is never bound (no recursion).
	Assembler *toolset.Assembler
	// Config is the configuration; nil means Assembler.Env.Config.
	Config *config.Config
	// Models builds chat models by name; nil builds them through
	// Assembler.Registry, once per name.
	Models ModelSource
	// ToolMiddlewares wrap every subagent tool call, first outermost,
	// outside the executor's own error handling (read-before-write,
	// output budget, ...).
	ToolMiddlewares []tool.Middleware
	// ModelMiddlewares wrap every subagent model request, after
	// dangling-call repair and before the deferred filter.
	ModelMiddlewares []tool.ModelMiddleware
	// Skills renders the skills section of a subagent's system prompt;
	// nil renders none.
	Skills agent.SkillsSection
	// Workers bounds the tasks that run at once; 0 means
	// subagents.workers (default 3). Further tasks wait for a worker.
	Workers int
	// ToolConcurrency bounds the concurrent tool calls of one subagent
	// step; 0 means the agent loop's default.
	ToolConcurrency int
	// PollGrace is added to a task's timeout to get the deadline after
	// which Delegate stops waiting (status polling_timed_out); 0 means 60
	// seconds.
	PollGrace time.Duration
	// CancelWait bounds the wait for a cancelled task to stop; 0 means 5
	// seconds.
	CancelWait time.Duration
	// MCPServers returns the current mcpServers of the extensions file,
	// for keyword routing of deferred MCP tools on the task's prompt; nil
	// means no routing.
	MCPServers func() map[string]config.MCPServer
	// Catalogs keeps the deferred-tool catalogues (tool_search's index),
	// built once per distinct MCP tool list and shared by every task;
	// pass the lead-agent factory's cache to share its catalogues too.
	// nil means a cache of the executor's own, of
	// deferred.DefaultCatalogCacheSize.
	Catalogs *deferred.CatalogCache
	// Logger receives diagnostics; nil discards.
	Logger *slog.Logger
	// Telemetry records each task's run (its invoke_agent span nests
	// under the task call's span); nil records none.
	Telemetry *telemetry.Recorder
	// LLMCalls is the process's cap on model calls in flight and its
	// circuit breakers, shared with the lead-agent factory
	// (FactoryOptions.LLMCalls); nil builds one for the executor from
	// Config.
	LLMCalls *agent.LLMCalls
	// Authorizer removes the tools the parent's role (the runtime
	// context's user_role, which subagents inherit) may not bind, before
	// deferred tools are set up; nil authorizes everything.
	Authorizer *authz.Authorizer
}

// Executor runs subagent tasks: each one a fresh agent loop with its own
// state, no parent history, the parent's sandbox and thread data, and
// the type's tools, turn cap, token budget and timeout. It implements
// builtin.Delegator.
//
// Tasks run on at most Workers goroutines at once. Each task has an
// execution id of its own; the registry of running executions is guarded
// by mu, and an execution's first terminal status wins. Close cancels
// every execution and waits for them.
type Executor struct {
	// Immutable after New.
	opts    Options
	cfg     *config.Config
	logger  *slog.Logger
	workers chan struct{} // a token per running task
	// safety is the safety_finish_reason guard every subagent's chain
	// holds, as the lead's does; nil when the section is off.
	safety tool.ModelMiddleware

	mu     sync.Mutex
	execs  map[string]*execution // guarded by mu
	closed bool                  // guarded by mu
	wg     sync.WaitGroup        // counts execution goroutines

	modelMu sync.Mutex
	models  map[string]model.ChatModel // guarded by modelMu
}

var _ builtin.Delegator = (*Executor)(nil)

// New returns an Executor.
func New(opts Options) (*Executor, error) {
	if opts.Assembler == nil {
		return nil, errors.New("subagent: executor needs an assembler")
	}
	cfg := opts.Config
	if cfg == nil && opts.Assembler.Env != nil {
		cfg = opts.Assembler.Env.Config
	}
	if cfg == nil {
		return nil, errors.New("subagent: executor needs a configuration")
	}
	opts.Workers = cmp.Or(opts.Workers, cfg.Subagents.Workers, 3)
	if opts.Workers < 0 {
		return nil, errors.New("subagent: Workers must not be negative")
	}
	opts.PollGrace = cmp.Or(opts.PollGrace, defaultPollGrace)
	opts.CancelWait = cmp.Or(opts.CancelWait, defaultCancelWait)
	if opts.Catalogs == nil {
		opts.Catalogs = deferred.NewCatalogCache(deferred.CatalogCacheOptions{})
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	x := &Executor{opts: opts, cfg: cfg, logger: logger, workers: make(chan struct{}, opts.Workers),
		execs: map[string]*execution{}, models: map[string]model.ChatModel{}}
	if x.opts.LLMCalls == nil {
		x.opts.LLMCalls = agent.NewLLMCalls(agent.LLMCallsOptions{LLMCall: cfg.LLMCall, CircuitBreaker: cfg.CircuitBreaker, Logger: logger})
	}
	if sf := cfg.SafetyFinishReason; sf.Enabled {
		detectors, err := agent.SafetyDetectorsFromConfig(sf)
		if err != nil {
			return nil, fmt.Errorf("subagent: %w", err)
		}
		x.safety = agent.SafetyFinishReason(agent.SafetyFinishReasonOptions{Detectors: detectors})
	}
	return x, nil
}

// Workers returns the number of tasks that may run at once.
func (x *Executor) Workers() int { return cap(x.workers) }

// Running returns the number of executions not yet finished (queued,
// running, or still stopping after Delegate gave up on them).
func (x *Executor) Running() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.execs)
}

// Close cancels every execution and waits for them to stop. Delegate
// fails with ErrClosed afterwards. Tools that ignore cancellation delay
// Close until they return.
func (x *Executor) Close() error {
	x.mu.Lock()
	x.closed = true
	for _, e := range x.execs {
		e.cancel()
	}
	x.mu.Unlock()
	x.wg.Wait()
	return nil
}

// ResolveTask resolves a subagent type (builtin.Delegator).
func (x *Executor) ResolveTask(subagentType, parentModel string) (builtin.TaskType, error) {
	t, err := ResolveType(x.cfg, subagentType)
	if err != nil {
		return builtin.TaskType{}, err
	}
	return builtin.TaskType{Name: t.Name, ModelName: t.ModelName(x.cfg, parentModel), Skills: t.Skills}, nil
}

// Delegate runs one task to a terminal status (builtin.Delegator).
//
// The task waits for a free worker, then runs with its type's timeout
// (status timed_out, "Execution timed out after N seconds"). If it is
// still not finished PollGrace after its timeout (a tool that ignores
// cancellation), Delegate returns polling_timed_out and leaves the
// execution to stop on its own; it leaves the registry when it does. When
// ctx ends, the task is cancelled cooperatively, Delegate waits up to
// CancelWait for it to stop and returns status cancelled with the usage
// so far, and ctx's error.
func (x *Executor) Delegate(ctx context.Context, req builtin.TaskRequest, progress func(builtin.TaskProgress)) (builtin.TaskResult, error) {
	typ, err := ResolveType(x.cfg, req.SubagentType)
	if err != nil {
		return builtin.TaskResult{Status: builtin.TaskFailed, Error: err.Error()}, nil
	}
	modelName := typ.ModelName(x.cfg, req.ParentModel)
	execCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e := &execution{id: newID(), taskID: req.TaskID, modelName: modelName, cancel: cancel,
		running: make(chan struct{}), done: make(chan struct{}), progress: progress}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		cancel()
		return builtin.TaskResult{}, ErrClosed
	}
	x.execs[e.id] = e
	x.wg.Add(1)
	x.mu.Unlock()
	log := x.logger.With("execution_id", e.id, "task_id", req.TaskID, "subagent", typ.Name)
	log.Info("subagent task submitted", "model", modelName, "timeout", typ.Timeout)
	go x.run(execCtx, e, typ, req, log)

	var deadline <-chan time.Time
	running := e.running
	for {
		select {
		case <-e.done:
			e.detach()
			return e.result(), nil
		case <-running:
			running = nil
			t := time.NewTimer(typ.Timeout + x.opts.PollGrace)
			defer t.Stop()
			deadline = t.C
		case <-deadline:
			status := e.statusText()
			msg := fmt.Sprintf("Task polling timed out after %d minutes. This may indicate the background task is stuck. Status: %s",
				int(typ.Timeout/time.Minute), status)
			log.Error("subagent task did not stop after its timeout; giving up on it", "status", status)
			e.cancel()
			e.setTerminal(builtin.TaskPollingTimedOut, "", "", msg)
			e.detach()
			return e.result(), nil
		case <-ctx.Done():
			e.cancel()
			wait := time.NewTimer(x.opts.CancelWait)
			select {
			case <-e.done:
			case <-wait.C:
				log.Warn("cancelled subagent task did not stop in time; it is cleaned up when it does")
			}
			wait.Stop()
			e.setTerminal(builtin.TaskCancelled, "", "", "")
			e.detach()
			return e.result(), ctx.Err()
		}
	}
}

// run is an execution's goroutine: it waits for a worker, runs the task
// and records its terminal status, then leaves the registry.
func (x *Executor) run(ctx context.Context, e *execution, typ Type, req builtin.TaskRequest, log *slog.Logger) {
	defer x.wg.Done()
	defer func() {
		e.cancel()
		x.mu.Lock()
		delete(x.execs, e.id)
		x.mu.Unlock()
	}()
	select {
	case x.workers <- struct{}{}:
	case <-ctx.Done():
		e.setTerminal(builtin.TaskCancelled, "", "", "")
		return
	}
	defer func() { <-x.workers }()
	e.markRunning()
	start := time.Now()
	runCtx, stop := context.WithTimeout(ctx, typ.Timeout)
	defer stop()
	out := x.execute(runCtx, e, typ, req, log)
	switch {
	case ctx.Err() != nil:
		e.setTerminal(builtin.TaskCancelled, "", "", "")
	case runCtx.Err() != nil:
		e.setTerminal(builtin.TaskTimedOut, "", "", fmt.Sprintf("Execution timed out after %d seconds", int(typ.Timeout/time.Second)))
	default:
		e.setOutcome(out)
	}
	r := e.result()
	log.Info("subagent task finished", "status", r.Status, "stop_reason", r.StopReason, "duration", time.Since(start))
}

// model returns the chat model named name.
func (x *Executor) model(ctx context.Context, name string) (model.ChatModel, error) {
	if x.opts.Models != nil {
		return x.opts.Models(ctx, name)
	}
	x.modelMu.Lock()
	defer x.modelMu.Unlock()
	if m, ok := x.models[name]; ok {
		return m, nil
	}
	idx := slices.IndexFunc(x.cfg.Models, func(m config.Model) bool { return m.Name == name })
	if idx < 0 {
		return nil, fmt.Errorf("model %q is not configured", name)
	}
	env := x.opts.Assembler.Env
	if env == nil || env.Config != x.cfg {
		e := toolset.Env{Config: x.cfg, Logger: x.logger}
		if x.opts.Assembler.Env != nil {
			e = *x.opts.Assembler.Env
			e.Config = x.cfg
		}
		env = &e
	}
	m, err := x.opts.Assembler.Registry.BuildModel(ctx, env, x.cfg.Models[idx], idx)
	if err != nil {
		return nil, err
	}
	// Named, as the lead's is: its chat spans and usage records carry
	// the models[] entry's name.
	m = agent.NamedModel(name, m)
	x.models[name] = m
	return m, nil
}

// execution is one task's record in the registry.
type execution struct {
	// Immutable after creation.
	id        string
	taskID    string
	modelName string
	cancel    context.CancelFunc
	running   chan struct{} // closed when a worker takes the task
	done      chan struct{} // closed at the first terminal status

	mu       sync.Mutex
	started  bool               // guarded by mu
	res      builtin.TaskResult // guarded by mu; Status "" until terminal
	usage    *model.Usage       // guarded by mu: cumulative
	messages int                // guarded by mu: assistant messages so far
	progress func(builtin.TaskProgress)
	emitMu   sync.Mutex // serialises progress calls with detach
	detached bool       // guarded by emitMu
}

func (e *execution) markRunning() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started {
		e.started = true
		close(e.running)
	}
}

// statusText is the DeerFlow status name of a non-terminal execution.
func (e *execution) statusText() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.res.Status != "":
		return string(e.res.Status)
	case e.started:
		return "running"
	}
	return "pending"
}

// setTerminal records a terminal status unless one is already recorded;
// it reports whether this call won.
func (e *execution) setTerminal(status builtin.TaskStatus, stop builtin.TaskStopReason, result, errText string) bool {
	return e.setOutcome(outcome{Status: status, StopReason: stop, Result: result, Error: errText})
}

// result returns the terminal result with the usage so far.
func (e *execution) result() builtin.TaskResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.res
	if r.ExecutionID == "" {
		r.ExecutionID, r.ModelName = e.id, e.modelName
	}
	if e.usage != nil {
		u := *e.usage
		r.Usage = &u
	}
	return r
}

// observe records one assistant message and reports it, unless the
// waiting task tool has gone.
func (e *execution) observe(msg model.Message) {
	e.mu.Lock()
	if msg.Usage != nil {
		u := msg.Usage.Add(model.Usage{})
		if e.usage != nil {
			u = e.usage.Add(*msg.Usage)
		}
		e.usage = &u
	}
	e.messages++
	p := builtin.TaskProgress{Message: msg, Index: e.messages}
	if e.usage != nil {
		u := *e.usage
		p.Usage = &u
	}
	e.mu.Unlock()
	e.emitMu.Lock()
	defer e.emitMu.Unlock()
	if !e.detached && e.progress != nil {
		e.progress(p)
	}
}

// detach stops progress reports: the task tool has returned.
func (e *execution) detach() {
	e.emitMu.Lock()
	e.detached = true
	e.emitMu.Unlock()
}

func newID() string { return strings.ToLower(rand.Text()) }
