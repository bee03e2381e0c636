package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/thread"
)

// streamMode is a set of LangGraph stream modes.
type streamMode uint8

const (
	modeValues streamMode = 1 << iota
	modeMessages
	modeUpdates
	modeCustom
)

// parseStreamModes reads stream_mode (a string or a list). Unknown modes
// (debug, tasks, checkpoints, events) are accepted and produce nothing;
// none given means values, LangGraph's default.
func parseStreamModes(raw json.RawMessage) (streamMode, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return modeValues, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		var one string
		if err := json.Unmarshal(raw, &one); err != nil {
			return 0, fmt.Errorf("stream_mode must be a string or a list of strings")
		}
		list = []string{one}
	}
	var m streamMode
	for _, s := range list {
		switch s {
		case "values":
			m |= modeValues
		case "messages", "messages-tuple":
			m |= modeMessages
		case "updates":
			m |= modeUpdates
		case "custom":
			m |= modeCustom
		}
	}
	return m, nil
}

// run is one run in flight. Its goroutine (execute) appends SSE frames;
// any number of HTTP handlers read them. A frame's SSE id is its index + 1.
type run struct {
	// immutable after start
	id, threadID, userID string
	modes                streamMode
	createdAt            time.Time
	cancel               context.CancelFunc
	finished             chan struct{} // closed when the run's goroutine is done

	mu        sync.Mutex
	frames    [][]byte      // guarded by mu; append-only
	wake      chan struct{} // guarded by mu; closed and replaced on every change
	done      bool          // guarded by mu: the end frame is written
	cancelled bool          // guarded by mu: cancelled by a request or Close
	reason    agent.StopReason

	// MCP elicitations waiting for the human (elicit.go), all guarded
	// by mu: the pending cards, oldest first; how many frames a stream
	// had sent when it last suspended for them; the payload of the last
	// values frame, which a card's values frame extends.
	asking      []askingCard
	suspendedAt int
	values      map[string]any

	// msgID is the id of the assistant message being streamed, set by
	// the model middleware before each model call.
	msgID atomic.Pointer[string]

	// owned by the run's goroutine (the event handler)
	streamed map[string]int // bytes of text streamed per message id
	thought  map[string]int // bytes of reasoning streamed per message id
	step     int
}

func newRun(id, threadID, userID string, modes streamMode, cancel context.CancelFunc) *run {
	return &run{id: id, threadID: threadID, userID: userID, modes: modes, createdAt: time.Now(),
		cancel: cancel, finished: make(chan struct{}), wake: make(chan struct{}),
		streamed: map[string]int{}, thought: map[string]int{}}
}

// emit appends one frame with a single-line JSON payload.
func (r *run) emit(event string, data any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	r.appendLocked(event, data)
	r.wakeLocked()
}

// appendLocked appends one frame; the caller wakes the readers.
func (r *run) appendLocked(event string, data any) {
	payload, err := json.Marshal(data)
	if err != nil {
		payload, _ = json.Marshal(map[string]any{"message": "cannot encode " + event + " event: " + err.Error(), "name": "EncodeError"})
		event = "error"
	}
	var b bytes.Buffer
	b.Grow(len(event) + len(payload) + 32)
	b.WriteString("event: ")
	b.WriteString(event)
	b.WriteString("\ndata: ")
	b.Write(payload)
	b.WriteString("\nid: ")
	b.WriteString(strconv.Itoa(len(r.frames) + 1))
	b.WriteString("\n\n")
	r.frames = append(r.frames, b.Bytes())
}

// wakeLocked tells the readers that something changed.
func (r *run) wakeLocked() {
	close(r.wake)
	r.wake = make(chan struct{})
}

// end writes the end frame and marks the stream complete.
func (r *run) end() {
	r.emit("end", nil)
	r.mu.Lock()
	r.done = true
	close(r.wake)
	r.wake = make(chan struct{})
	r.mu.Unlock()
}

// read returns the frames after the first n, whether the stream is
// complete, and a channel closed at the next change.
func (r *run) read(n int) (frames [][]byte, done bool, wake <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < len(r.frames) {
		frames = r.frames[n:len(r.frames):len(r.frames)]
	}
	return frames, r.done, r.wake
}

// requestCancel cancels the run on behalf of a client or shutdown; the
// run then ends without an error frame.
func (r *run) requestCancel() {
	r.mu.Lock()
	r.cancelled = true
	r.mu.Unlock()
	r.cancel()
}

func (r *run) wasCancelled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancelled
}

func (r *run) meta(node string) map[string]any {
	return map[string]any{"run_id": r.id, "thread_id": r.threadID, "langgraph_node": node,
		"langgraph_step": r.step, "tags": []string{}}
}

// handle turns one agent event into frames. It runs on the run's
// goroutine.
func (r *run) handle(ev agent.Event) {
	switch ev.Type {
	case agent.EventMessageDelta:
		r.delta(ev)
	case agent.EventMessage:
		if ev.Message != nil {
			r.step++
			r.finalChunk(*ev.Message)
			if r.modes&modeUpdates != 0 {
				r.emit("updates", map[string]any{"model": map[string]any{"messages": []any{messageDict(*ev.Message)}}})
			}
		}
	case agent.EventToolEnd:
		if ev.Message == nil {
			return
		}
		d := messageDict(*ev.Message)
		if r.modes&modeMessages != 0 {
			r.emit("messages", []any{d, r.meta("tools")})
		}
		if r.modes&modeUpdates != 0 {
			r.emit("updates", map[string]any{"tools": map[string]any{"messages": []any{d}}})
		}
	case agent.EventState:
		if r.modes&modeUpdates != 0 && ev.Update != nil {
			// A tool's update comes from the tools node; the title
			// from its own (agent.TitleNode), which the frontend
			// renames the thread from.
			node := "tools"
			if ev.ToolCallID == "" && ev.Name != "" {
				node = ev.Name
			}
			r.emit("updates", map[string]any{node: updateValues(ev.Update)})
		}
	case agent.EventToolStart, agent.EventClarification, agent.EventApproval:
		// The tool message (with the clarification or approval card in
		// its artifact) follows in tool_end and the next values frame.
	case agent.EventError:
		if !r.wasCancelled() {
			r.emit("error", map[string]any{"message": ev.Error, "name": "RunError"})
		}
	case agent.EventDone:
		r.reason = ev.Reason
	default:
		if r.modes&modeCustom != 0 {
			r.emit("custom", customPayload(ev))
		}
	}
}

// delta streams a text or reasoning delta as an AIMessageChunk under the
// id the assistant message will have.
func (r *run) delta(ev agent.Event) {
	p := r.msgID.Load()
	if p == nil {
		return
	}
	id := *p
	kwargs := map[string]any{}
	if ev.Reasoning != "" {
		kwargs[reasoningKey] = ev.Reasoning
		r.thought[id] += len(ev.Reasoning)
	}
	r.streamed[id] += len(ev.Delta)
	if r.modes&modeMessages == 0 {
		return
	}
	r.emit("messages", []any{chunkDict(id, ev.Delta, kwargs, nil, nil), r.meta("model")})
}

// finalChunk sends what the deltas did not carry of a complete assistant
// message: the rest of its text (all of it when nothing was streamed),
// its tool calls as tool_call_chunks and its usage. The SDK concatenates
// chunks of one id, so nothing already sent is sent again.
func (r *run) finalChunk(m model.Message) {
	if r.modes&modeMessages == 0 {
		return
	}
	text := m.Content
	if n := r.streamed[m.ID]; n > 0 {
		text = suffixAfter(m.Content, n)
	}
	kwargs := map[string]any{}
	if n := r.thought[m.ID]; m.Reasoning != "" {
		if rest := suffixAfter(m.Reasoning, n); rest != "" {
			kwargs[reasoningKey] = rest
		}
	}
	for k, v := range m.Meta {
		kwargs[k] = v
	}
	chunks := make([]map[string]any, 0, len(m.ToolCalls))
	for i, tc := range m.ToolCalls {
		chunks = append(chunks, map[string]any{"index": i, "id": tc.ID, "name": tc.Name,
			"args": string(tc.Arguments), "type": "tool_call_chunk"})
	}
	_, seen := r.streamed[m.ID]
	if seen && text == "" && len(chunks) == 0 && m.Usage == nil {
		return
	}
	r.emit("messages", []any{chunkDict(m.ID, text, kwargs, chunks, m.Usage), r.meta("model")})
}

// suffixAfter returns s without its first n bytes (all of s when n is
// out of range).
func suffixAfter(s string, n int) string {
	if n <= 0 || n > len(s) {
		return s
	}
	return s[n:]
}

func chunkDict(id, text string, kwargs map[string]any, toolChunks []map[string]any, usage *model.Usage) map[string]any {
	if toolChunks == nil {
		toolChunks = []map[string]any{}
	}
	d := map[string]any{
		"type": "AIMessageChunk", "id": id, "content": text, "additional_kwargs": kwargs,
		"response_metadata": map[string]any{}, "name": nil, "tool_call_chunks": toolChunks,
		"tool_calls": []any{}, "invalid_tool_calls": []any{},
	}
	if usage != nil {
		d["usage_metadata"] = usageDict(*usage)
	}
	return d
}

// updateValues is a state update as an updates-frame payload, without
// host paths.
func updateValues(u *thread.Update) map[string]any {
	c := *u
	c.ThreadData = nil
	v := map[string]any{}
	if b, err := json.Marshal(&c); err == nil {
		_ = json.Unmarshal(b, &v)
	}
	if len(c.Messages) > 0 {
		msgs := make([]any, 0, len(c.Messages))
		for _, m := range c.Messages {
			msgs = append(msgs, messageDict(m))
		}
		v["messages"] = msgs
	}
	if imgs, ok := v["viewed_images"].(map[string]any); ok {
		for _, img := range imgs {
			if m, ok := img.(map[string]any); ok {
				delete(m, "actual_path")
			}
		}
	}
	return v
}

// customPayload is a tool-emitted event (task_started, task_running, ...)
// as DeerFlow's custom frames carry it: the event's data with its type.
func customPayload(ev agent.Event) map[string]any {
	out := map[string]any{}
	switch d := ev.Data.(type) {
	case map[string]any:
		for k, v := range d {
			out[k] = v
		}
	case nil:
	default:
		b, err := json.Marshal(d)
		var m map[string]any
		if err == nil && json.Unmarshal(b, &m) == nil && m != nil {
			out = m
		} else {
			out["data"] = d
		}
	}
	out["type"] = string(ev.Type)
	if ev.ToolCallID != "" {
		if _, ok := out["tool_call_id"]; !ok {
			out["tool_call_id"] = ev.ToolCallID
		}
	}
	return out
}

// apiRunStatus maps a stored run to the status LangGraph clients know:
// a clarification ends a run successfully (as in DeerFlow), and so does a
// run waiting for a tool call's approval (its card is a clarification
// card); a cancelled run is "interrupted".
func apiRunStatus(r *store.Run) string {
	switch r.Status {
	case store.RunInterrupted:
		if r.StopReason == string(agent.StopClarification) || r.StopReason == string(agent.StopApproval) {
			return store.RunSuccess
		}
		return store.RunInterrupted
	case store.RunCancelled:
		return store.RunInterrupted
	case "":
		return store.RunPending
	}
	return strings.ToLower(r.Status)
}
