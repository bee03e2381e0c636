package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/model"
)

// This file brings an MCP server's elicitation/create request, made
// while one of a run's tool calls runs, to the human through DeerFlow's
// unchanged web frontend (docs/api.md, "MCP elicitation"):
//
//  1. Elicit (the mcptools.Options.ElicitationHandler of `antler serve`)
//     finds the run whose call asked (mcptools.ElicitationCall), emits
//     the request as a clarification card (a tool message named
//     ask_clarification with a human_input_request artifact,
//     elicit_card.go) in the run's messages and values frames, and waits.
//  2. The run's streams, once they have sent every frame, end with an
//     end frame while the run goes on waiting (serveStreamFrom): the
//     frontend only lets the human answer a card once its stream has
//     ended. The card is also added to the thread's state, history and
//     messages page while it waits, which the frontend reloads then.
//  3. The frontend's answer is a new run request whose hidden human
//     message carries a human_input_response naming the card. streamRun
//     hands it to the waiting Elicit instead of starting a run, and the
//     request streams the waiting run's frames from where its last
//     stream stopped, until the run ends or waits again.
//
// The wait is bounded (Options.ElicitationTimeout; the server then gets
// "cancel"), ends with the call (run cancelled, call timeout), and at
// most Options.MaxElicitationsPerRun wait per run (more are declined).

// Defaults of Options' elicitation bounds.
const (
	defaultElicitationTimeout = 5 * time.Minute
	defaultMaxElicitations    = 4
	// maxElicitAnswerBytes bounds the human's answer to one card.
	maxElicitAnswerBytes = 64 << 10
)

// elicitRequestPrefix starts the request id of an elicitation card, so
// that an answer is told from an ask_clarification or approval answer.
const elicitRequestPrefix = "mcp_elicitation:"

// elicitation is one request waiting for the human.
type elicitation struct {
	// immutable after registration
	id, server, runID, threadID, userID string
	seq                                 uint64 // order of registration
	card                                *elicitCard
	answer                              chan *mcp.ElicitResult // buffered 1; sent once by whoever took it from Server.elicits
}

// askingCard is a pending card of a run: its message (as a dict for the
// frames) and the number of frames once the card was emitted.
type askingCard struct {
	id       string
	msg      model.Message
	resumeAt int
}

// Elicit answers an MCP server's elicitation/create request (the
// mcptools.Options.ElicitationHandler `antler serve` sets): it shows the
// request to the human of the run whose tool call asked, as a
// clarification card, and waits for the answer (see the top of this
// file). A request that cannot be attributed to one run of this
// gateway, made where no human is present (disable_clarification,
// non_interactive: a webhook channel, a scheduled run), or
// beyond the bound of waiting requests per run, is declined with a log
// line; one whose wait ends without an answer gets "cancel".
func (s *Server) Elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	server := mcptools.ElicitationServer(ctx)
	p := req.Params
	if p == nil {
		p = &mcp.ElicitParams{}
	}
	call := mcptools.ElicitationCall(ctx)
	var rn *run
	if call != nil {
		rn = s.activeRun(call.RunID)
	}
	switch {
	case call == nil:
		return s.declineElicit(server, p, "the request cannot be tied to one run's tool call (no call, or calls of several runs, are in flight on that server's session)")
	case rn == nil || rn.threadID != call.ThreadID || rn.userID != call.UserID:
		return s.declineElicit(server, p, "the asking call is not a run active on this gateway")
	case call.ContextBool("disable_clarification"), call.ContextBool("non_interactive"):
		return s.declineElicit(server, p, "no human is present to answer in this run (disable_clarification or non_interactive)")
	}
	id := elicitRequestPrefix + uuid.NewString()
	card, err := newElicitCard(id, server, call.ID, p)
	if err != nil {
		return s.declineElicit(server, p, err.Error())
	}
	el := &elicitation{id: id, server: server, runID: rn.id, threadID: rn.threadID, userID: rn.userID,
		card: card, answer: make(chan *mcp.ElicitResult, 1)}
	if !s.addElicitation(el, rn) {
		return s.declineElicit(server, p, fmt.Sprintf("the run already waits for %d answers", s.elicitMax()))
	}
	defer rn.closeCard(id)
	wait := s.elicitWait()
	s.logger.Info("MCP server asks the user; waiting for the answer", "mcp_server", server, "run_id", rn.id,
		"request_id", id, "timeout", wait)

	timer := time.NewTimer(wait)
	defer timer.Stop()
	var why string
	select {
	case res := <-el.answer:
		return res, nil
	case <-timer.C:
		why = "no answer within " + wait.String()
	case <-ctx.Done():
		why = "the call ended"
	case <-s.baseCtx.Done():
		why = "the gateway is shutting down"
	}
	if !s.takeElicitation(id) { // answered meanwhile: the answer is on its way
		return <-el.answer, nil
	}
	s.logger.Info("MCP server's question to the user cancelled", "mcp_server", server, "run_id", rn.id, "request_id", id, "reason", why)
	return &mcp.ElicitResult{Action: "cancel"}, nil
}

// elicitWait is Options.ElicitationTimeout, 5 minutes when not positive.
func (s *Server) elicitWait() time.Duration {
	if s.elicitTimeout > 0 {
		return s.elicitTimeout
	}
	return defaultElicitationTimeout
}

// elicitMax is Options.MaxElicitationsPerRun, 4 when not positive.
func (s *Server) elicitMax() int {
	if s.maxElicits > 0 {
		return s.maxElicits
	}
	return defaultMaxElicitations
}

// declineElicit logs why a request is declined and declines it. A
// url-mode request's address is reduced to its host: it may carry a
// one-time state.
func (s *Server) declineElicit(server string, p *mcp.ElicitParams, why string) (*mcp.ElicitResult, error) {
	args := []any{"mcp_server", server, "message", clipRunes(p.Message, maxElicitMessage), "reason", why}
	if p.URL != "" {
		args = append(args, "url_host", urlHost(p.URL))
	}
	s.logger.Warn("MCP server asked the user for input; declined", args...)
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// addElicitation registers el and shows its card in rn, in one step
// (so that no answer finds it before its card), unless the run already
// has the maximum waiting.
func (s *Server) addElicitation(el *elicitation, rn *run) bool {
	s.elicitMu.Lock()
	defer s.elicitMu.Unlock()
	n := 0
	for _, o := range s.elicits {
		if o.runID == el.runID {
			n++
		}
	}
	if n >= s.elicitMax() {
		return false
	}
	s.elicitSeq++
	el.seq = s.elicitSeq
	s.elicits[el.id] = el
	rn.openCard(askingCard{id: el.id, msg: el.card.msg}) // lock order: elicitMu, then the run's mu
	return true
}

// takeElicitation removes a pending request; false when it was taken
// already (answered, or ended). Whoever takes it sends its answer.
func (s *Server) takeElicitation(id string) bool {
	s.elicitMu.Lock()
	defer s.elicitMu.Unlock()
	if _, ok := s.elicits[id]; !ok {
		return false
	}
	delete(s.elicits, id)
	return true
}

// pendingElicitation returns the request id, or the newest of thread tid
// when id is "", if it waits for user.
func (s *Server) pendingElicitation(id, tid, user string) *elicitation {
	s.elicitMu.Lock()
	defer s.elicitMu.Unlock()
	if id != "" {
		if el := s.elicits[id]; el != nil && el.threadID == tid && el.userID == user {
			return el
		}
		return nil
	}
	var newest *elicitation
	for _, el := range s.elicits {
		if el.threadID == tid && el.userID == user && (newest == nil || el.seq > newest.seq) {
			newest = el
		}
	}
	return newest
}

// pendingCards are the cards waiting on thread tid, oldest first, as the
// tool messages added to its state while they wait.
func (s *Server) pendingCards(tid string) []model.Message {
	s.elicitMu.Lock()
	var els []*elicitation
	for _, el := range s.elicits {
		if el.threadID == tid {
			els = append(els, el)
		}
	}
	s.elicitMu.Unlock()
	slices.SortFunc(els, func(a, b *elicitation) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]model.Message, len(els))
	for i, el := range els {
		out[i] = el.card.msg
	}
	return out
}

// withPendingCards adds the cards waiting on tid to a values payload
// (state, newest history entry).
func (s *Server) withPendingCards(tid string, values map[string]any) map[string]any {
	cards := s.pendingCards(tid)
	if len(cards) == 0 {
		return values
	}
	return valuesWithCards(values, cards)
}

// valuesWithCards returns a copy of values whose messages end with cards.
func valuesWithCards(values map[string]any, cards []model.Message) map[string]any {
	out := make(map[string]any, len(values)+1)
	for k, v := range values {
		out[k] = v
	}
	msgs, _ := values["messages"].([]any)
	msgs = slices.Clip(msgs)
	for _, c := range cards {
		msgs = append(msgs, messageDict(c))
	}
	out["messages"] = msgs
	return out
}

// answerElicitation serves a run request that answers a waiting card
// (see the top of this file); handled is false when msgs answer none, so
// that the request starts a run as usual. A request naming a card that
// does not wait here fails with 409; an answer that does not fit the
// card with 422, the card still waiting.
func (s *Server) answerElicitation(w http.ResponseWriter, r *http.Request, u *principal, tid string, req *runRequest, msgs []model.Message) (handled bool) {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != model.RoleUser {
		return false
	}
	m := msgs[len(msgs)-1]
	resp, _ := m.Meta["human_input_response"].(map[string]any)
	id, _ := resp["request_id"].(string)
	var el *elicitation
	switch {
	case strings.HasPrefix(id, elicitRequestPrefix):
		if el = s.pendingElicitation(id, tid, u.ID); el == nil {
			writeError(w, http.StatusConflict, "The MCP server's question %s no longer waits for an answer here: it was answered, "+
				"timed out or ended with its run, or it waits on another gateway replica, which alone can take the answer. "+
				"Send your message again as a new message if it still matters.", id)
			return true
		}
	case resp != nil:
		return false // the answer to another kind of card
	default: // a plain message answers the newest card of the thread
		if hidden, _ := m.Meta["hide_from_ui"].(bool); hidden {
			return false
		}
		if el = s.pendingElicitation("", tid, u.ID); el == nil {
			return false
		}
	}
	// The answer joins the waiting run's stream, in that run's modes.
	kind, optionID, value := answerParts(m, resp)
	if len(value) > maxElicitAnswerBytes {
		writeError(w, http.StatusUnprocessableEntity, "The answer to the MCP server's question is %d bytes; at most %d are sent", len(value), maxElicitAnswerBytes)
		return true
	}
	res, err := el.card.result(kind, optionID, value)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "Cannot send your answer to the MCP server '%s': %v. Answer again, or answer decline or cancel.", el.server, err)
		return true
	}
	rn := s.activeRun(el.runID)
	if rn == nil || !s.takeElicitation(el.id) {
		writeError(w, http.StatusConflict, "The MCP server's question %s no longer waits for an answer: it timed out or ended with its run.", el.id)
		return true
	}
	start := rn.closeCard(el.id)
	el.answer <- res
	s.logger.Info("the user answered the MCP server's question", "mcp_server", el.server, "run_id", rn.id,
		"request_id", el.id, "action", res.Action)
	meta, _ := json.Marshal(map[string]any{"run_id": rn.id, "thread_id": rn.threadID, "attempt": 1})
	s.serveStreamFrom(w, r, rn, start, req.OnDisconnect != "continue", []byte("event: metadata\ndata: "+string(meta)+"\n\n"))
	return true
}

// answerParts reads a human message's answer: the human_input_response's
// kind, option id and value, else the message text.
func answerParts(m model.Message, resp map[string]any) (kind, optionID, value string) {
	if resp != nil {
		kind, _ = resp["response_kind"].(string)
		optionID, _ = resp["option_id"].(string)
		if v, ok := resp["value"].(string); ok {
			return kind, optionID, v
		}
	}
	return "text", "", m.Text()
}

// openCard emits a card in the run's frames (a messages frame with the
// tool message, a values frame with it added to the last state) and
// marks the run as waiting, in one step: a stream that has sent the
// card's frames then suspends (suspend).
func (r *run) openCard(c askingCard) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	if r.modes&modeMessages != 0 {
		// Not r.meta: the step belongs to the run's goroutine, and this
		// is the MCP client's.
		meta := map[string]any{"run_id": r.id, "thread_id": r.threadID, "langgraph_node": "tools", "tags": []string{}}
		r.appendLocked("messages", []any{messageDict(c.msg), meta})
	}
	r.asking = append(r.asking, c)
	if r.modes&modeValues != 0 {
		r.appendLocked("values", r.valuesLocked(r.values))
	}
	r.asking[len(r.asking)-1].resumeAt = len(r.frames)
	r.wakeLocked()
}

// closeCard ends a card's wait and returns where a stream carrying the
// answer starts: after the card's frames, and after what a suspended
// stream has sent. It is idempotent.
func (r *run) closeCard(id string) (start int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.IndexFunc(r.asking, func(c askingCard) bool { return c.id == id })
	if i < 0 {
		return max(r.suspendedAt, len(r.frames))
	}
	start = max(r.suspendedAt, r.asking[i].resumeAt)
	r.asking = slices.Delete(r.asking, i, i+1)
	r.wakeLocked()
	return start
}

// suspend reports whether a stream that has sent next frames ends here:
// it has sent them all and the run waits for an answer. It records how
// far the stream got.
func (r *run) suspend(next int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.asking) == 0 || next < len(r.frames) || r.done {
		return false
	}
	r.suspendedAt = max(r.suspendedAt, next)
	return true
}

// emitValues emits a checkpoint's values frame, with the cards still
// waiting, and keeps it for the next card's values frame.
func (r *run) emitValues(v map[string]any) {
	r.mu.Lock()
	r.values = v
	withCards := r.valuesLocked(v)
	r.mu.Unlock()
	r.emit("values", withCards)
}

// valuesLocked is v with the waiting cards added.
func (r *run) valuesLocked(v map[string]any) map[string]any {
	if v == nil {
		v = map[string]any{"messages": []any{}}
	}
	if len(r.asking) == 0 {
		return v
	}
	cards := make([]model.Message, len(r.asking))
	for i, c := range r.asking {
		cards[i] = c.msg
	}
	return valuesWithCards(v, cards)
}
