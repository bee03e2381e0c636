package cli

import (
	"context"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/mcptools"
)

// elicitor answers the elicitation/create requests of the app's MCP
// servers (mcptools.Options.ElicitationHandler). In serve the gateway
// answers them (route). With a human attached (chat, while a turn runs)
// it hands each request to them, one at a time; without one (run, chat
// between turns) it declines, with
// a warning line naming the server and its message, so that a run with
// nobody to answer never waits.
type elicitor struct {
	logger *slog.Logger

	mu    sync.Mutex // guards human and direct
	human elicitHuman
	// direct, when set, answers every request at once and concurrently
	// (serve: the gateway brings each to the human of the run that
	// asked, gateway/elicit.go).
	direct func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)

	ask     sync.Mutex  // one question to the human at a time
	inQuery atomic.Bool // a question is on the terminal (the tool line pauses)
}

// elicitHuman asks the human one request; server names the asking
// server.
type elicitHuman func(ctx context.Context, server string, req *mcp.ElicitRequest) *mcp.ElicitResult

// declined is the answer sent when nobody can answer.
func declined() *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} }

// attach makes h answer the requests until the returned detach is
// called.
func (e *elicitor) attach(h elicitHuman) (detach func()) {
	e.mu.Lock()
	e.human = h
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		e.human = nil
		e.mu.Unlock()
	}
}

// route makes h answer every request from now on, concurrently.
func (e *elicitor) route(h func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) {
	e.mu.Lock()
	e.direct = h
	e.mu.Unlock()
}

// wait returns once no question is on the terminal: chat calls it
// after a turn, so that its prompt never reads the terminal together
// with a question still open (a call abandoned while the human answers).
func (e *elicitor) wait() {
	e.ask.Lock()
	//lint:ignore SA2001 an empty critical section: waiting for the holder is the point
	e.ask.Unlock()
}

// asking reports whether a question is on the terminal; nil-safe.
func (e *elicitor) asking() bool { return e != nil && e.inQuery.Load() }

// handle implements the MCP client's elicitation handler.
func (e *elicitor) handle(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	server := mcptools.ElicitationServer(ctx)
	e.mu.Lock()
	h, direct := e.human, e.direct
	e.mu.Unlock()
	if direct != nil {
		return direct(ctx, req)
	}
	if h == nil {
		e.decline(server, req.Params)
		return declined(), nil
	}
	e.ask.Lock()
	defer e.ask.Unlock()
	e.inQuery.Store(true)
	defer e.inQuery.Store(false)
	return h(ctx, server, req), nil
}

// decline logs the request nobody answers. A url-mode request's URL is
// reduced to its host: it may carry a one-time state.
func (e *elicitor) decline(server string, p *mcp.ElicitParams) {
	args := []any{"mcp_server", server, "message", clipRunes(p.Message, maxElicitMessage)}
	if p.URL != "" {
		host := "?"
		if u, err := url.Parse(p.URL); err == nil {
			host = u.Host
		}
		args = append(args, "url_host", host)
	}
	e.logger.Warn("MCP server asked the user for input and no human is here to answer: declined", args...)
}

// maxElicitMessage bounds the characters of a server's message shown or
// logged.
const maxElicitMessage = 2000

// clipRunes cuts s to n characters, marking the cut.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
