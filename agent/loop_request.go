package agent

import (
	"strings"

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
	summary string          // the summary msgs was built with
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
		// Room for a quarter more messages (and at least 16) before the
		// state's array moves and the buffer is built again.
		b.msgs = make([]model.Message, 0, 2+len(state)+max(len(state)/4, 16))
		if system != "" {
			b.msgs = append(b.msgs, model.SystemText(system))
		}
		if r.state.SummaryText != "" {
			b.msgs = append(b.msgs, summaryContext(r.state.SummaryText))
		}
		b.n, b.summary = 0, r.state.SummaryText
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
