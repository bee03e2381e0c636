package agent

import (
	"strings"
	"sync/atomic"

	"github.com/antlerhq/antler/model"
)

// requestBuffer keeps the messages of a run's model requests (the system
// prompt, the summary's context message, then the thread's messages)
// from one step to the next, so that a step appends the messages added
// since the last one instead of copying the whole history.
//
// The run's state keeps its messages in the buffer's array, after the
// system and summary messages (adopted when the buffer is built), so
// neither the state nor the request copies the history per step.
//
// It is valid while the state's messages only grew by appends: same
// first element, same summary, at least as many messages. Any other
// change (a merge by id, a removal, a summarisation) gives the messages a
// new array (the reducers copy on write), and the buffer is rebuilt. The
// messages before the buffer's length are never written again, and the
// request gets the buffer capped at its length, so a middleware that
// appends to it (or a later step) never writes where a reader looks.
type requestBuffer struct {
	msgs    []model.Message // system, summary, then the messages below
	base    *model.Message  // &state.Messages[0] when built (nil for none)
	n       int             // state messages in msgs
	system  string          // the system prompt msgs was built with
	summary string          // the summary msgs was built with
}

// continuation is what an outcome keeps of its run's request buffer, so
// that a run continuing it (Input.Continue) extends the buffer in place,
// after the messages the outcome's state holds, instead of copying the
// history into a buffer of its own. Only the first run that continues
// an outcome takes its buffer (taken); any other copies, as a run on a
// state it was lent does.
type continuation struct {
	buf     []model.Message // the buffer, resliced to its capacity
	k       int             // system and summary messages before the state's
	system  string          // the system prompt buf[:k] was built with
	summary string          // the summary buf[:k] was built with
	taken   atomic.Bool
}

// keep returns the continuation of a finished run whose state's messages
// are still in its request buffer, right after its system and summary
// messages; nil otherwise.
func (b *requestBuffer) keep(state []model.Message) *continuation {
	k := len(b.msgs) - b.n
	if b.msgs == nil || len(state) == 0 || b.n == 0 || &b.msgs[k] != &state[0] {
		return nil
	}
	return &continuation{buf: b.msgs[:cap(b.msgs)], k: k, system: b.system, summary: b.summary}
}

// adopt makes the buffer of the continued outcome (r.cont) the run's
// request buffer when it was built with the same system prompt and
// summary and still holds the state's messages; it reports whether it
// did. The outcome's state and the run's share those messages, which
// nothing writes again (appends go past them, reducers copy on write).
func (r *runState) adopt(system string) bool {
	c := r.cont
	r.cont = nil
	state := r.state.Messages
	if c == nil || c.system != system || c.summary != r.state.SummaryText || len(state) == 0 ||
		c.k+len(state) > len(c.buf) || &c.buf[c.k] != &state[0] {
		return false
	}
	b := &r.req
	b.msgs = c.buf[:c.k+len(state)]
	b.system, b.summary = system, c.summary
	b.n, b.base = len(state), &b.msgs[c.k]
	r.state.Messages = b.msgs[c.k:]
	return true
}

// requestMessages returns the messages of the next model request.
func (r *runState) requestMessages() []model.Message {
	b := &r.req
	state := r.state.Messages
	var first *model.Message
	if len(state) > 0 {
		first = &state[0]
	}
	extends := b.msgs != nil && r.state.SummaryText == b.summary && len(state) >= b.n && (b.n == 0 || first == b.base)
	if !extends {
		system := r.a.opts.SystemPrompt
		if r.state.SummaryText != "" {
			// The thread's summary goes to the model as hidden context data.
			system = strings.TrimPrefix(system+"\n\n"+durableAuthority, "\n\n")
		}
		if r.adopt(system) {
			return b.msgs[:len(b.msgs):len(b.msgs)]
		}
		// Room for a quarter more messages (and at least 16) before the
		// state's array moves and the buffer is built again.
		b.msgs = make([]model.Message, 0, 2+len(state)+max(len(state)/4, 16))
		if system != "" {
			b.msgs = append(b.msgs, model.SystemText(system))
		}
		if r.state.SummaryText != "" {
			b.msgs = append(b.msgs, summaryContext(r.state.SummaryText))
		}
		b.n, b.system, b.summary = 0, system, r.state.SummaryText
		// The state's messages move into the buffer, whose spare
		// capacity the run owns: later appends to the state land where
		// the buffer extends, and the next request copies nothing.
		k := len(b.msgs)
		b.msgs = append(b.msgs, state...)
		r.state.Messages = b.msgs[k:]
		r.moved(state, r.state.Messages)
		state = r.state.Messages
		if len(state) > 0 {
			first = &state[0]
		}
		b.n = len(state)
	}
	// Appended state messages are already in place (the copy is a no-op)
	// unless the state's array moved, which rebuilds above.
	b.msgs = append(b.msgs, state[b.n:]...)
	b.base, b.n = first, len(state)
	return b.msgs[:len(b.msgs):len(b.msgs)]
}
