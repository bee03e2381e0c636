package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// callResult is the outcome of one tool call of a step.
type callResult struct {
	res *tool.Result
	msg model.Message
	// fresh: msg's id was generated for it, so no message has it yet.
	fresh bool
}

// toolStep runs the tool calls of msg concurrently (bounded), appends
// their results in call order and merges their state updates with the
// reducers, in call order. It returns a non-empty stop reason when a
// result asked to end the run or a return-direct tool was called.
//
// Tool goroutines never call emit: their events go through a channel that
// this goroutine drains, so a Run iterator's yield is only ever called
// from the goroutine that ranges over it.
func (r *runState) toolStep(ctx context.Context, msg model.Message) (StopReason, error) {
	calls := msg.ToolCalls
	results := make([]callResult, len(calls))
	// The calls read a view: it shares the messages (never changed in
	// place) and copies the rest, so a step does not copy the history.
	snapshot := r.state.View()
	events := make(chan Event, 16)
	var runErr error
	go func() {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(r.a.opts.ToolConcurrency)
		for i, tc := range calls {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err // cancelled while waiting for a slot: never start
				}
				cr, err := r.callTool(gctx, tc, snapshot, events)
				if err != nil {
					return err
				}
				results[i] = cr
				return nil
			})
		}
		runErr = g.Wait()
		close(events)
	}()
	for ev := range events {
		r.usage.addTask(ev)
		r.emit(ev, nil)
	}
	if runErr != nil {
		return "", runErr
	}

	// Updates are applied one call at a time, in call order, so that every
	// key's reducer sees each call's write (two present_files calls both
	// keep their artifacts). They are applied to a copy: a rejected update
	// fails the whole step, leaving none of its results in the state.
	// The copy keeps the messages' array: a fresh tool message is appended
	// past r.state's length (nothing reads there), any other message goes
	// through the reducer, which copies on write.
	next := r.state.View()
	next.Messages = r.state.Messages
	var stop StopReason
	var out []Event
	for i, cr := range results {
		u := stepUpdate(cr)
		if err := applyStepUpdate(next, u, cr.fresh); err != nil {
			return "", err
		}
		if rest := *u; true {
			rest.Messages = nil
			if !rest.IsZero() {
				out = append(out, Event{Type: EventState, ToolCallID: cr.msg.ToolCallID, Name: cr.msg.Name, Update: &rest})
			}
		}
		if ev, reason, ok := askEvent(cr, calls[i]); ok {
			out = append(out, ev)
			if cr.res.End {
				stop = reason
			}
		}
		switch {
		case stop != "":
		case cr.res.End:
			stop = StopEnd
		case calls[i].Name == builtin.AskClarificationName:
			// The Clarification middleware decides (End): with
			// disable_clarification the run continues (DeerFlow's clarification_tool.py).
		case r.a.tools[calls[i].Name] != nil && r.a.tools[calls[i].Name].ReturnDirect:
			stop = StopReturnDirect
		}
	}
	r.state = next
	for _, ev := range out {
		r.emit(ev, nil)
	}
	return stop, nil
}

// stepUpdate is the state update of one call: its tool message, then the
// result's own update. Only an approval card may record a pending
// approval, and no tool result may grant one: those keys are the approval
// flow's alone.
func stepUpdate(cr callResult) *thread.Update {
	u := &thread.Update{Messages: []model.Message{cr.msg}}
	if cr.res.Update != nil {
		extra := *cr.res.Update
		u = &extra
		u.Messages = append([]model.Message{cr.msg}, cr.res.Update.Messages...)
	}
	if !isApprovalRequest(cr.res.Artifact) {
		u.Approvals = nil
	}
	u.ApprovalGrants = nil
	return u
}

// applyStepUpdate applies one call's update to next: its tool message
// (u.Messages[0]) is appended when fresh, without the reducer's copy and
// index of the whole history; the result's own messages and every other
// key go through the reducers. The result equals next.Apply(u).
func applyStepUpdate(next *thread.State, u *thread.Update, fresh bool) error {
	if !fresh || len(u.Messages) == 0 {
		return next.Apply(u)
	}
	rest := *u
	rest.Messages = u.Messages[1:]
	if len(rest.Messages) == 0 {
		rest.Messages = nil
	}
	// The sandbox check first: a rejected update leaves next unchanged.
	probe := &thread.State{Sandbox: next.Sandbox}
	if err := probe.Apply(&thread.Update{Sandbox: u.Sandbox}); err != nil {
		return err
	}
	next.Messages = append(next.Messages, u.Messages[0])
	return next.Apply(&rest)
}

// askEvent is the event of a result that asks the human: a clarification
// question, or an approval card naming the paused call, with the stop
// reason it ends the run with.
func askEvent(cr callResult, tc model.ToolCall) (Event, StopReason, bool) {
	data, ok := humanInput(cr.msg.Artifact)
	if !ok {
		return Event{}, "", false
	}
	m := cr.msg
	if isApprovalRequest(cr.msg.Artifact) {
		return Event{Type: EventApproval, ToolCallID: m.ToolCallID, Name: tc.Name, Arguments: tc.Arguments, Message: &m, Data: data}, StopApproval, true
	}
	return Event{Type: EventClarification, ToolCallID: m.ToolCallID, Name: m.Name, Message: &m, Data: data}, StopClarification, true
}

// humanInput returns the clarification payload of a tool message's
// artifact ({"human_input": {...}}), if it has one.
func humanInput(artifact any) (any, bool) {
	m, ok := artifact.(map[string]any)
	if !ok {
		return nil, false
	}
	v, ok := m["human_input"]
	return v, ok && v != nil
}

// callTool runs one call: name check, argument check, the tool's handler
// wrapped in the tool middlewares, panic recovery. Only cancellation
// (and a handler error after the run's context ended) is returned as an
// error; everything else becomes an error result the model reads.
func (r *runState) callTool(ctx context.Context, tc model.ToolCall, snapshot *thread.State, events chan<- Event) (cr callResult, err error) {
	events <- Event{Type: EventToolStart, ToolCallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}
	start := time.Now()
	sctx, span := r.a.opts.Telemetry.StartTool(ctx, telemetry.Tool{Name: tc.Name, CallID: tc.ID, Meta: r.toolMeta(tc.Name), Arguments: tc.Arguments})
	res, err := r.execute(sctx, tc, snapshot, events)
	endToolSpan(span, res, err)
	if err != nil {
		return callResult{}, err
	}
	msg := toolMessage(tc, res)
	fresh := res.MessageID == ""
	m := msg
	events <- Event{Type: EventToolEnd, ToolCallID: tc.ID, Name: tc.Name, IsError: res.IsError,
		DurationMS: float64(time.Since(start).Microseconds()) / 1000, Message: &m}
	return callResult{res: res, msg: msg, fresh: fresh}, nil
}

func (r *runState) execute(ctx context.Context, tc model.ToolCall, snapshot *thread.State, events chan<- Event) (res *tool.Result, err error) {
	h, ok := r.a.handlers[tc.Name]
	if !ok {
		return invalidTool(tc.Name, r.a.names, r.a.joined), nil
	}
	args := bytes.TrimSpace(tc.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if !json.Valid(args) || args[0] != '{' {
		return tool.Errorf("Error: invalid arguments for %s: arguments must be a JSON object, got %s", tc.Name, clip(string(args), 200)), nil
	}
	// Emit may be handed to goroutines that outlive the call (a late
	// progress callback); once the call has returned its events are
	// dropped, since the step's event channel is closed when its calls end.
	var emitMu sync.Mutex
	returned := false
	defer func() {
		emitMu.Lock()
		returned = true
		emitMu.Unlock()
	}()
	call := &tool.Call{
		ID: tc.ID, Name: tc.Name, ThreadID: r.in.ThreadID, UserID: r.in.UserID, AgentName: r.in.AgentName,
		RunID: r.in.RunID, State: snapshot, Context: r.in.Context, Meta: r.toolMeta(tc.Name),
		Logger: r.logger.With("tool", tc.Name, "tool_call_id", tc.ID),
		// Progress reports are throttled per call (tool.ThrottleProgress).
		Emit: tool.ThrottleProgress(func(event string, data any) {
			emitMu.Lock()
			defer emitMu.Unlock()
			if returned {
				return
			}
			select {
			case events <- Event{Type: EventType(event), ToolCallID: tc.ID, Name: tc.Name, Data: data}:
			case <-ctx.Done():
			}
		}),
	}
	res, err = tool.Invoke(ctx, h, call, args)
	if err != nil {
		return nil, err
	}
	return classified(res), nil
}

// toolMeta is the Meta of the bound tool called name (nil when unknown).
func (r *runState) toolMeta(name string) map[string]string {
	if t := r.a.tools[name]; t != nil {
		return t.Meta
	}
	return nil
}

// toolMessage turns a result into the tool message appended to the
// thread.
func toolMessage(tc model.ToolCall, res *tool.Result) model.Message {
	msg := model.Message{
		ID: res.MessageID, Role: model.RoleTool, Content: res.TextContent(), ToolCallID: tc.ID, Name: tc.Name,
		Artifact: res.Artifact, Meta: res.Meta,
	}
	if msg.ID == "" {
		msg.ID = newID()
	}
	if isApprovalRequest(res.Artifact) {
		// DeerFlow's frontend shows a card for a tool message of this name.
		msg.Name = builtin.AskClarificationName
	}
	if res.IsError {
		msg.Status = "error"
	}
	for _, b := range res.Content {
		if b.Type == tool.BlockImage {
			msg.Parts = append(msg.Parts, model.Part{Type: model.PartImage, MIMEType: b.MIMEType, Data: b.Data})
		}
	}
	return msg
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}
