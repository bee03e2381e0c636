package tool

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
)

// Tool is a callable tool. Its fields are fixed at construction; a Tool is
// safe for concurrent use when its Handler is.
type Tool struct {
	// Name is the name the model calls; it matches ^[A-Za-z0-9_-]{1,64}$.
	Name string
	// Description is the model-facing description.
	Description string
	// InputSchema is the JSON Schema (an object schema) of the arguments.
	InputSchema json.RawMessage
	// Handler runs a call. Arguments are always a JSON object.
	Handler Handler
	// ReturnDirect ends the run after this tool's result, as a
	// LangChain return_direct tool.
	ReturnDirect bool
	// Meta holds informational labels that are never shown to the model,
	// such as "mcp_server" and "mcp_tool" (the server's own tool name).
	Meta map[string]string
}

// Definition returns the tool as a model sees it.
func (t *Tool) Definition() model.ToolDefinition {
	return model.ToolDefinition{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
}

// Handler runs one tool call. args is the JSON object the model sent.
// Failures follow the error contract of the package documentation: a
// Result with IsError for what the model can act on; a Go error only when
// the call could not be made (Invoke turns it into a failure result) or
// was cancelled (which stops the run).
type Handler func(ctx context.Context, call *Call, args json.RawMessage) (*Result, error)

// Middleware wraps a Handler. In a list of middlewares the first one is the
// outermost: it sees the call first and the result last.
type Middleware func(next Handler) Handler

// Chain wraps h with mws, the first listed outermost.
func Chain(h Handler, mws ...Middleware) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}

// Call is the runtime of one tool call.
type Call struct {
	// ID is the model's tool-call id.
	ID string
	// Name is the name of the tool being called.
	Name     string
	ThreadID string
	UserID   string
	// AgentName is the custom agent running ("" for the default agent).
	AgentName string
	RunID     string
	// Meta is the called tool's Meta (labels such as "mcp_server"), for
	// middlewares that decide by where a tool comes from. Read-only; nil
	// when the caller has no tool value at hand.
	Meta map[string]string
	// State is a read-only snapshot of the thread state taken before the
	// step's tool calls started. Tools must not modify it; they return a
	// thread.Update instead.
	State *thread.State
	// Context holds per-run values that are not checkpointed, such as
	// DeerFlow's runtime context keys ("channel_name",
	// "disable_clarification", "is_bootstrap").
	Context map[string]any
	// Logger is never nil when the agent loop makes the call; use
	// Call.Log to be safe elsewhere.
	Logger *slog.Logger
	// Emit, if non-nil, sends a custom event (such as task_started) into
	// the run's event stream.
	Emit func(event string, data any)
}

// Log returns c.Logger, or a logger that discards when it is nil.
func (c *Call) Log() *slog.Logger {
	if c == nil || c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// EmitEvent sends a custom event if the call has an event sink.
func (c *Call) EmitEvent(event string, data any) {
	if c != nil && c.Emit != nil {
		c.Emit(event, data)
	}
}

// ContextString returns the string value of a runtime context key.
func (c *Call) ContextString(key string) string {
	if c == nil {
		return ""
	}
	s, _ := c.Context[key].(string)
	return s
}

// ContextBool returns the truthiness of a runtime context key.
func (c *Call) ContextBool(key string) bool {
	if c == nil {
		return false
	}
	switch v := c.Context[key].(type) {
	case bool:
		return v
	case string:
		return v == "true" || v == "1" || v == "yes"
	case int:
		return v != 0
	case float64:
		return v != 0
	}
	return false
}
