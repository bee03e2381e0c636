package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// Input is one run's request.
type Input struct {
	// ThreadID names the thread; with a Store, "" starts a new thread
	// with a generated id (reported in EventDone and Outcome).
	ThreadID string
	UserID   string
	// AgentName is the custom agent running ("" for the default agent).
	AgentName string
	// RunID identifies the run; "" generates one.
	RunID string
	// Messages are appended to the thread before the first step (usually
	// the user's message). A message without an ID gets one.
	Messages []model.Message
	// State is the starting state when the agent has no Store; it is not
	// modified (the run works on a copy).
	State *thread.State
	// Continue, when the agent has no Store, is the outcome of an earlier
	// run of the thread to go on from, handed over: the run starts from
	// Continue.State (State must be nil or the same) and extends its
	// messages in place, in the array the earlier run left them in,
	// instead of copying the history (a chat that keeps its thread in
	// memory passes each run's outcome to the next). The caller must not
	// append to Continue.State's messages or change them in place once
	// handed over; reading them stays safe, the run never writes them.
	// A state cut short (resliced) is continued from its length: the
	// messages past it in the same array are overwritten. An outcome
	// continued twice is copied by the second run, as a lent State is.
	// With a Store it is an error.
	Continue *Outcome
	// Context holds the run's non-checkpointed runtime values, handed to
	// tools and middlewares (channel_name, disable_clarification, ...).
	// The run never modifies it.
	Context map[string]any
}

// Outcome is the result of a finished run.
type Outcome struct {
	ThreadID string
	RunID    string
	Reason   StopReason
	// Turns counts the model calls made.
	Turns int
	Usage model.Usage
	// State is the thread state at the end of the run.
	State *thread.State
	// Error is the failure recorded for a run that ended with StopError
	// without a Go error: a model call that failed after its retries,
	// answered by LLMErrorHandling's fallback message (its detail).
	Error string

	// cont is the run's request buffer, for a run that continues this
	// outcome (Input.Continue); nil when State's messages left it.
	cont *continuation
}

// Run starts a run and returns its events. The sequence ends with an
// EventDone; a failure is reported first as an EventError paired with the
// Go error (cancellation, a model or transport failure, a store failure,
// conflicting state updates), then EventDone with reason error or
// cancelled. Breaking out of the loop cancels the run.
func (a *Agent) Run(ctx context.Context, in Input) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stopped := false
		emit := func(ev Event, err error) {
			if stopped {
				return
			}
			if !yield(ev, err) {
				stopped = true
				cancel()
			}
		}
		a.run(ctx, in, emit)
	}
}

// Invoke runs to the end, calling sink (if non-nil) with every event, and
// returns the outcome. The error is the run's failure, if any; the
// outcome is returned either way.
func (a *Agent) Invoke(ctx context.Context, in Input, sink func(Event)) (*Outcome, error) {
	return a.run(ctx, in, func(ev Event, _ error) {
		if sink != nil {
			sink(ev)
		}
	})
}

// runState is one run in progress. It is owned by the run's goroutine.
type runState struct {
	a      *Agent
	in     Input
	emit   func(Event, error)
	logger *slog.Logger
	state  *thread.State
	// step and parent track the checkpoint chain of the thread.
	step   int
	parent string
	turns  int
	usage  runUsage
	// titleJob is the title model call, once started.
	titleJob *titleJob
	// summaryFailed is set once a summary could not be written.
	summaryFailed bool
	// req is the request's messages of the last step (see
	// requestMessages).
	req requestBuffer
	// cont is the buffer of the outcome the run continues and took, until
	// its first request adopts it (see adopt).
	cont *continuation
	// fallback is the detail of the error fallback message that ended
	// the run (LLMErrorHandling), "" otherwise.
	fallback string
	// written is the state's messages as of checkpoint parent, in the
	// state's array while the run only appended to them since (see
	// keptMessages).
	written []model.Message
}

func (a *Agent) run(ctx context.Context, in Input, emit func(Event, error)) (*Outcome, error) {
	if in.RunID == "" {
		in.RunID = newID()
	}
	if in.ThreadID == "" {
		in.ThreadID = newID()
	}
	r := &runState{a: a, in: in, emit: emit,
		logger: a.logger.With("thread_id", in.ThreadID, "run_id", in.RunID)}
	ctx, span := a.opts.Telemetry.StartRun(ctx, telemetry.Run{Agent: spanAgentName(in), ThreadID: in.ThreadID, RunID: in.RunID})
	if traceID, spanID := span.TraceIDs(); traceID != "" {
		r.logger = r.logger.With("trace_id", traceID, "span_id", spanID)
	}
	reason, err := r.loop(ctx)
	defer func() { span.EndRun(string(reason), r.turns, r.usage.loop, err) }()
	r.endTitle(ctx, reason, err)
	out := &Outcome{ThreadID: in.ThreadID, RunID: in.RunID, Reason: reason, Turns: r.turns, Usage: r.usage.loop, State: r.state,
		Error: r.fallback}
	if r.state != nil && a.opts.Store == nil {
		out.cont = r.req.keep(r.state.Messages)
	}
	r.finish(ctx, reason, err)
	if a.opts.AfterRun != nil && err == nil && reason == StopCompleted && r.state != nil {
		a.opts.AfterRun(in, out)
	}
	if a.opts.RunEnded != nil {
		a.opts.RunEnded(in, out, err)
	}
	if err != nil {
		emit(Event{Type: EventError, Error: err.Error(), ThreadID: in.ThreadID, RunID: in.RunID}, err)
	}
	usage := r.usage.loop
	emit(Event{Type: EventDone, Reason: reason, ThreadID: in.ThreadID, RunID: in.RunID, Turns: r.turns, Usage: &usage}, nil)
	return out, err
}

func (r *runState) loop(ctx context.Context) (StopReason, error) {
	if err := r.load(ctx); err != nil {
		return failure(ctx, err)
	}
	// The history moves once into the run's request buffer, before the
	// input is appended to it.
	r.requestMessages()
	for _, m := range r.in.Messages {
		fresh := m.ID == ""
		if fresh {
			m.ID = newID()
		}
		r.appendMessage(m, fresh)
	}
	if len(r.in.Messages) > 0 {
		if err := r.checkpoint(ctx, "input"); err != nil {
			return failure(ctx, err)
		}
	}
	// Tool calls paused for approval are answered before the model runs.
	stop, err := r.resumeApprovals(ctx)
	if err != nil {
		return failure(ctx, err)
	}
	if stop != "" {
		return stop, nil
	}
	modelHandler := tool.ChainModel(r.callModel, r.a.opts.ModelMiddlewares...)
	for {
		if r.turns >= r.a.opts.MaxTurns {
			r.logger.Warn("run reached its turn limit", "max_turns", r.a.opts.MaxTurns)
			return StopMaxTurns, nil
		}
		if err := ctx.Err(); err != nil {
			return failure(ctx, err)
		}
		if err := r.summarizeBeforeModel(ctx); err != nil {
			return failure(ctx, err)
		}
		r.turns++
		msg, err := r.modelStep(ctx, modelHandler)
		if err != nil {
			return failure(ctx, err)
		}
		r.afterModel(ctx)
		// The answer is saved before its tools run, as LangGraph
		// checkpoints its model node.
		if err := r.checkpoint(ctx, "loop"); err != nil {
			return failure(ctx, err)
		}
		if len(msg.ToolCalls) == 0 {
			// A model call that failed after its retries was answered
			// with an explanation: the run failed (DeerFlow's worker
			// marks it error with the detail).
			if detail, ok := IsErrorFallback(msg); ok {
				r.fallback = detail
				return StopError, nil
			}
			// A model middleware that capped the run says so on the
			// final message (loop detection, the subagent limit, the
			// token budget, the model length and safety finish reasons).
			switch s, _ := msg.Meta["stop_reason"].(string); StopReason(s) {
			case StopLoopCapped, StopSubagentLimitCapped, StopTokenCapped, StopSafetyCapped, StopModelLengthCapped:
				return StopReason(s), nil
			}
			return StopCompleted, nil
		}
		stop, err := r.toolStep(ctx, msg)
		if err != nil {
			return failure(ctx, err)
		}
		r.takeTitle(false)
		if err := r.checkpoint(ctx, "loop"); err != nil {
			return failure(ctx, err)
		}
		if stop != "" {
			return stop, nil
		}
	}
}

func failure(ctx context.Context, err error) (StopReason, error) {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return StopCancelled, err
	}
	return StopError, err
}

// load reads the thread's latest checkpoint, creating the thread when it
// does not exist yet, records the run as running and marks the thread
// busy, in that order: a busy thread always has a running run recorded,
// so that recovery after a crash (which ends the runs of dead processes
// and frees their threads) never leaves a thread busy.
func (r *runState) load(ctx context.Context) error {
	s := r.a.opts.Store
	if c := r.in.Continue; c != nil {
		switch {
		case s != nil:
			return errors.New("agent: Input.Continue needs an agent without a Store")
		case r.in.State != nil && r.in.State != c.State:
			return errors.New("agent: Input.State and Input.Continue name different states")
		}
		// The continued outcome's buffer is the run's if no other run
		// took it; its first request adopts it.
		if c.cont != nil && c.cont.taken.CompareAndSwap(false, true) {
			r.cont = c.cont
		}
		r.state = c.State.View()
		return nil
	}
	if s == nil {
		// A view: the messages are copied once, into the request buffer.
		r.state = r.in.State.View()
		return nil
	}
	th, err := s.GetThread(ctx, r.in.ThreadID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		th = &store.Thread{ID: r.in.ThreadID, UserID: r.in.UserID, AgentName: r.in.AgentName, Status: store.ThreadIdle}
		if err := s.CreateThread(ctx, th); err != nil {
			return err
		}
		r.state = r.in.State.Clone()
	case err != nil:
		return err
	default:
		if th.UserID != r.in.UserID {
			return fmt.Errorf("agent: thread %q belongs to another user", r.in.ThreadID)
		}
		cp, err := s.LatestCheckpoint(ctx, r.in.ThreadID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			r.state = r.in.State.Clone()
		case err != nil:
			return err
		default:
			r.state, r.step, r.parent = cp.State, cp.Step+1, cp.ID
			r.written = cp.State.Messages
		}
	}
	if err := s.CreateRun(ctx, &store.Run{ID: r.in.RunID, ThreadID: r.in.ThreadID, UserID: r.in.UserID,
		AgentName: r.in.AgentName, Status: store.RunRunning}); err != nil {
		return err
	}
	th.Status = store.ThreadBusy
	return s.UpdateThread(ctx, th)
}

// checkpoint writes the current state as the thread's next checkpoint.
func (r *runState) checkpoint(ctx context.Context, source string) error {
	s := r.a.opts.Store
	if s == nil {
		return nil
	}
	cp := &store.Checkpoint{ThreadID: r.in.ThreadID, ParentID: r.parent, RunID: r.in.RunID, Step: r.step,
		State: r.state, KeptMessages: r.keptMessages(), Metadata: map[string]any{"source": source}}
	ctx, span := r.a.opts.Telemetry.Start(ctx, "antler.checkpoint", telemetry.Checkpoint(source, r.step)...)
	err := s.PutCheckpoint(ctx, cp)
	span.End(err)
	if err != nil {
		return fmt.Errorf("agent: checkpoint: %w", err)
	}
	r.step++
	r.parent = cp.ID
	r.written = r.state.Messages[:len(r.state.Messages):len(r.state.Messages)]
	return nil
}

// keptMessages is how many leading messages of the state are those of
// checkpoint r.parent, unchanged (store.Checkpoint.KeptMessages): all of
// them while the state's messages are still in the array they were
// written from and only grew. The loop never writes a message below the
// state's length in place (reducers copy on write, appends go past it),
// so the same array and at least the same length mean the same messages.
// Anything else (a summarization, a merge by id) gives the messages a new
// array, and the store compares them all.
func (r *runState) keptMessages() int {
	w, now := r.written, r.state.Messages
	if len(w) == 0 || len(now) < len(w) || &now[0] != &w[0] {
		return 0
	}
	return len(w)
}

// moved records that the loop copied the state's messages from one array
// to another (an append that outgrew its array, the move into the request
// buffer): the written messages, if from held them, are now in to.
func (r *runState) moved(from, to []model.Message) {
	w := r.written
	if len(w) == 0 || len(from) < len(w) || len(to) < len(w) || &from[0] != &w[0] || &to[0] == &from[0] {
		return
	}
	r.written = to[:len(w):len(w)]
}

// finishWriteTimeout bounds each write of finish. Each has a fresh
// context, apart from the run's (which may be cancelled already), so that
// a slow or retried first write does not leave the run's outcome without
// time.
const finishWriteTimeout = 10 * time.Second

// finish records the run's outcome and token usage. After a failure it
// saves the state reached so far (an assistant message whose tool calls never ran is
// repaired by DanglingToolCalls on the next run).
func (r *runState) finish(ctx context.Context, reason StopReason, runErr error) {
	s := r.a.opts.Store
	if s == nil || r.state == nil {
		return
	}
	write := func(fn func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishWriteTimeout)
		defer cancel()
		return fn(ctx)
	}
	runStatus, threadStatus := store.RunSuccess, store.ThreadIdle
	errText := ""
	switch reason {
	case StopClarification, StopApproval:
		runStatus, threadStatus = store.RunInterrupted, store.ThreadInterrupted
	case StopCancelled:
		runStatus = store.RunCancelled
	case StopError:
		runStatus, threadStatus = store.RunError, store.ThreadError
	}
	if runErr == nil {
		errText = r.fallback
	}
	if runErr != nil {
		errText = runErr.Error()
		if err := write(func(ctx context.Context) error { return r.checkpoint(ctx, "interrupted") }); err != nil {
			r.logger.Error("cannot save the state of a failed run", "err", err)
		}
	}
	usage := r.usage.record.Clone()
	usage.ModelName = ModelName(r.a.opts.Model)
	update := store.RunUpdate{Status: runStatus, StopReason: string(reason), Error: errText, Usage: usage}
	if err := write(func(ctx context.Context) error { return s.UpdateRun(ctx, r.in.RunID, update) }); err != nil &&
		!errors.Is(err, store.ErrNotFound) {
		r.logger.Error("cannot record the run's outcome", "err", err)
	}
	err := write(func(ctx context.Context) error {
		th, err := s.GetThread(ctx, r.in.ThreadID)
		if err != nil {
			return err
		}
		th.Status = threadStatus
		return s.UpdateThread(ctx, th)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		r.logger.Error("cannot record the thread's status", "err", err)
	}
}

// callModel is the innermost model handler: it streams the response and
// forwards its deltas as events.
func (r *runState) callModel(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
	ctx, span := r.a.opts.Telemetry.StartModel(ctx, ModelName(r.a.opts.Model), call.Request)
	resp, err := model.Collect(ctx, r.a.opts.Model, call.Request, func(ev model.Event) {
		span.FirstToken()
		switch {
		case ev.TextDelta != "":
			r.emit(Event{Type: EventMessageDelta, Delta: ev.TextDelta}, nil)
		case ev.ReasoningDelta != "":
			r.emit(Event{Type: EventMessageDelta, Reasoning: ev.ReasoningDelta}, nil)
		}
	})
	span.EndModel(resp, err)
	return resp, err
}

// modelStep sends one request through the model middlewares and appends
// the answer to the state.
func (r *runState) modelStep(ctx context.Context, h tool.ModelHandler) (model.Message, error) {
	o := &r.a.opts
	msgs := r.requestMessages()
	req := &model.Request{Messages: msgs, Tools: r.a.defs, MaxTokens: o.MaxTokens, Temperature: o.Temperature, Thinking: o.Thinking}
	call := &tool.ModelCall{Request: req, State: r.state.View(), ThreadID: r.in.ThreadID, UserID: r.in.UserID,
		AgentName: r.in.AgentName, RunID: r.in.RunID, Context: r.in.Context, Logger: r.logger,
		Emit: func(event string, data any) { r.emit(Event{Type: EventType(event), Data: data}, nil) }}
	resp, err := h(ctx, call)
	if err != nil {
		return model.Message{}, err
	}
	if resp == nil {
		return model.Message{}, model.ErrNoResponse
	}
	msg := resp.Message
	msg.Role = model.RoleAssistant
	fresh := msg.ID == ""
	if fresh {
		msg.ID = newID()
	}
	if resp.Usage != (model.Usage{}) {
		u := resp.Usage
		msg.Usage = &u
		r.usage.addLead(r.a.opts.Model, u)
	}
	for i := range msg.ToolCalls {
		if msg.ToolCalls[i].ID == "" {
			msg.ToolCalls[i].ID = "call_" + newID()
		}
	}
	r.appendMessage(msg, fresh)
	m := msg
	r.emit(Event{Type: EventMessage, Message: &m}, nil)
	return msg, nil
}

// appendMessage adds m to the state: a message with an id the run just
// generated, or with an id the state does not hold (the reducer would
// append it too), is appended directly, without the reducer's copy and
// index of the history; any other goes through the messages reducer (same
// id replaces, a removal deletes).
func (r *runState) appendMessage(m model.Message, fresh bool) {
	if fresh || (!m.Remove && !hasMessage(r.state.Messages, m.ID)) {
		old := r.state.Messages
		r.state.Messages = append(r.state.Messages, m)
		r.moved(old, r.state.Messages)
		return
	}
	r.state.Messages = thread.MergeMessages(r.state.Messages, []model.Message{m})
}

// hasMessage reports whether msgs holds a message with id.
func hasMessage(msgs []model.Message, id string) bool {
	for i := range msgs {
		if msgs[i].ID == id {
			return true
		}
	}
	return false
}
