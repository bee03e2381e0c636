package modeltest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/antlerhq/antler/model"
)

// scriptedName is the model name modeltest reports in errors and on the wire.
const scriptedName = "modeltest"

// Model is the in-process scripted double. It is safe for concurrent
// use: turns are handed out in call order under a mutex, rules need no
// state.
type Model struct {
	script Script // immutable after New

	mu       sync.Mutex
	next     int              // guarded by mu: index of the next turn
	calls    int              // guarded by mu: model calls so far
	requests []*model.Request // guarded by mu
}

var _ model.ChatModel = (*Model)(nil)

// New returns a Model that plays turns in order and fails once they run
// out.
func New(turns ...Turn) *Model { return FromScript(Script{Turns: turns}) }

// FromScript returns a Model that plays s.
func FromScript(s Script) *Model { return &Model{script: s} }

// Requests returns copies of the requests received so far, in call
// order (nothing when Script.NoRecord is set).
func (m *Model) Requests() []*model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*model.Request, len(m.requests))
	for i, r := range m.requests {
		out[i] = r.Clone()
	}
	return out
}

// LastRequest returns the most recent request, or nil.
func (m *Model) LastRequest() *model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) == 0 {
		return nil
	}
	return m.requests[len(m.requests)-1].Clone()
}

// Calls returns how many model calls were made.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// Remaining returns how many scripted turns are left (rules not
// counted; 0 for a looping script).
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.script.Loop {
		return 0
	}
	return max(0, len(m.script.Turns)-m.next)
}

// ToolNames returns the names of the tools bound in req, in order.
func ToolNames(req *model.Request) []string {
	names := make([]string, len(req.Tools))
	for i, t := range req.Tools {
		names[i] = t.Name
	}
	return names
}

// LastMessage returns the last message of req, or the zero Message.
func LastMessage(req *model.Request) model.Message {
	if len(req.Messages) == 0 {
		return model.Message{}
	}
	return req.Messages[len(req.Messages)-1]
}

// pick records req and returns the turn to play for it, with tool-call
// ids filled in.
func (m *Model) pick(req *model.Request) (Turn, error) {
	m.mu.Lock()
	m.calls++
	n := m.calls
	if !m.script.NoRecord {
		m.requests = append(m.requests, req.Clone())
	}
	var (
		turn  Turn
		found bool
	)
	if k := len(m.script.Turns); k > 0 && (m.next < k || m.script.Loop) {
		turn, found = m.script.Turns[m.next%k], true
		m.next++
	}
	m.mu.Unlock()

	if !found {
		turn, found = m.match(req)
	}
	if !found {
		return Turn{}, fmt.Errorf("modeltest: script exhausted: no turn left and no rule matched model call %d", n)
	}
	if turn.Func != nil {
		turn = turn.Func(req)
	}
	if len(turn.ToolCalls) > 0 {
		calls := make([]model.ToolCall, len(turn.ToolCalls))
		for i, tc := range turn.ToolCalls {
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("call_%d_%d", n, i)
			}
			if len(tc.Arguments) == 0 {
				tc.Arguments = json.RawMessage("{}")
			}
			calls[i] = tc
		}
		turn.ToolCalls = calls
	}
	return turn, nil
}

// match returns the reply of the first rule that matches req.
func (m *Model) match(req *model.Request) (Turn, bool) {
	last := LastMessage(req)
	for _, r := range m.script.Rules {
		if r.LastRole != "" && r.LastRole != last.Role {
			continue
		}
		if r.Contains != "" && !strings.Contains(last.Content, r.Contains) {
			continue
		}
		if r.Tool != "" && !hasTool(req, r.Tool) {
			continue
		}
		return expand(r.Reply, last.Content), true
	}
	return Turn{}, false
}

func hasTool(req *model.Request, name string) bool {
	for _, t := range req.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// expand replaces "{last}" in a rule's reply.
func expand(t Turn, last string) Turn {
	const ph = "{last}"
	t.Text = strings.ReplaceAll(t.Text, ph, last)
	if len(t.ToolCalls) == 0 {
		return t
	}
	esc, _ := json.Marshal(last)
	escaped := string(esc[1 : len(esc)-1])
	calls := make([]model.ToolCall, len(t.ToolCalls))
	for i, tc := range t.ToolCalls {
		if strings.Contains(string(tc.Arguments), ph) {
			tc.Arguments = json.RawMessage(strings.ReplaceAll(string(tc.Arguments), ph, escaped))
		}
		calls[i] = tc
	}
	t.ToolCalls = calls
	return t
}

// response returns the complete answer a turn stands for.
func response(t Turn, req *model.Request) *model.Response {
	msg := model.Message{Role: model.RoleAssistant, Content: t.Text, Reasoning: t.Reasoning, ToolCalls: t.ToolCalls}
	fr := t.FinishReason
	if fr == "" {
		fr = model.FinishStop
		if len(t.ToolCalls) > 0 {
			fr = model.FinishToolCalls
		}
	}
	u := estimateUsage(t, req)
	if t.Usage != nil {
		u = *t.Usage
	}
	mu := u
	msg.Usage = &mu
	// The scripted model speaks the chat-completions wire form.
	return &model.Response{Message: msg, Usage: u, FinishReason: fr,
		Metadata: map[string]any{model.MetaFinishReason: string(fr)}}
}

func estimateUsage(t Turn, req *model.Request) model.Usage {
	in := 0
	for _, msg := range req.Messages {
		in += len(msg.Content)
		for _, tc := range msg.ToolCalls {
			in += len(tc.Arguments)
		}
	}
	out := len(t.Text) + len(t.Reasoning)
	for _, tc := range t.ToolCalls {
		out += len(tc.Name) + len(tc.Arguments)
	}
	u := model.Usage{InputTokens: int64(in/4 + 1), OutputTokens: int64(out/4 + 1)}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return u
}

// chunks splits s into pieces of at most size bytes, never inside a
// UTF-8 sequence; size <= 0 returns s whole.
func chunks(s string, size int) []string {
	if s == "" {
		return nil
	}
	if size <= 0 || len(s) <= size {
		return []string{s}
	}
	var out []string
	for len(s) > 0 {
		n := min(size, len(s))
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 {
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// providerError is the error a failing turn yields in process.
func providerError(t Turn) error {
	pe := &model.ProviderError{Model: scriptedName, Provider: scriptedName, StatusCode: t.Status, Message: t.Error}
	if t.Disconnect && t.Status == 0 {
		pe.Message = "the stream ended unexpectedly"
		pe.Err = io.ErrUnexpectedEOF
	}
	return pe
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Generate plays the next turn. See [model.ChatModel].
func (m *Model) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(model.Event{}, err)
			return
		}
		turn, err := m.pick(req)
		if err != nil {
			yield(model.Event{}, err)
			return
		}
		if err := sleep(ctx, turn.Delay); err != nil {
			yield(model.Event{}, err)
			return
		}
		if turn.Status != 0 {
			yield(model.Event{}, providerError(turn))
			return
		}
		first := true
		emit := func(ev model.Event) bool {
			if !first {
				if err := sleep(ctx, turn.ChunkDelay); err != nil {
					yield(model.Event{}, err)
					return false
				}
			}
			first = false
			return yield(ev, nil)
		}
		for _, c := range chunks(turn.Reasoning, m.script.ChunkSize) {
			if !emit(model.Event{ReasoningDelta: c}) {
				return
			}
		}
		for _, c := range chunks(turn.Text, m.script.ChunkSize) {
			if !emit(model.Event{TextDelta: c}) {
				return
			}
		}
		for i, tc := range turn.ToolCalls {
			d := &model.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Arguments: string(tc.Arguments)}
			if !emit(model.Event{ToolCallDelta: d}) {
				return
			}
		}
		if turn.Error != "" || turn.Disconnect {
			yield(model.Event{}, providerError(turn))
			return
		}
		if err := ctx.Err(); err != nil {
			yield(model.Event{}, err)
			return
		}
		yield(model.Event{Response: response(turn, req)}, nil)
	}
}
