package tool

import (
	"context"
	"log/slog"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
)

// ModelCall is one model request made by the agent loop, with what a
// model middleware needs to decide how to rewrite it.
//
// It lives in package tool rather than model because model middlewares
// (the deferred-tool filter, image injection, skill tool policy) read the
// thread state, and package thread already depends on package model.
type ModelCall struct {
	// Request is the request about to be sent; a middleware that rewrites
	// it must Clone it first.
	Request *model.Request
	// State is a read-only snapshot of the thread state.
	State     *thread.State
	ThreadID  string
	UserID    string
	AgentName string
	RunID     string
	// Context holds the run's non-checkpointed runtime values.
	Context map[string]any
	Logger  *slog.Logger
	// Emit, if non-nil, sends a custom event (such as
	// safety_termination) into the run's event stream. The agent loop
	// sets it; it must be called before the handler returns.
	Emit func(event string, data any)
}

// Log returns c.Logger, or a logger that discards when it is nil.
func (c *ModelCall) Log() *slog.Logger {
	if c == nil || c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// EmitEvent sends a custom event if the call has an event sink.
func (c *ModelCall) EmitEvent(event string, data any) {
	if c != nil && c.Emit != nil {
		c.Emit(event, data)
	}
}

// ModelHandler sends a model call and returns the model's response.
type ModelHandler func(ctx context.Context, call *ModelCall) (*model.Response, error)

// ModelMiddleware wraps a ModelHandler (WrapModelCall). The first listed
// is the outermost.
type ModelMiddleware func(next ModelHandler) ModelHandler

// ChainModel wraps h with mws, the first listed outermost.
func ChainModel(h ModelHandler, mws ...ModelMiddleware) ModelHandler {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}
