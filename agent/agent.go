package agent

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/tool"
)

// Defaults of Options.
const (
	// defaultMaxTurns is the number of model calls a run may make. DeerFlow
	// runs with LangGraph's recursion limit of 100 graph steps, about 50
	// model/tool rounds.
	defaultMaxTurns = 50
	// defaultToolConcurrency bounds the tool calls of one model message
	// that run at the same time.
	defaultToolConcurrency = 16
)

// Options configure an Agent. Model is required; every other zero value
// is documented.
type Options struct {
	// Model answers each step. Required. The run's usage record names
	// it by NamedModel's name (store.UnknownModel without one).
	Model model.ChatModel
	// Tools are the bound tools, in bound order (toolset.Toolset.Tools()).
	// Names must be unique.
	Tools []*tool.Tool
	// ToolMiddlewares wrap every tool call, the first listed outermost.
	ToolMiddlewares []tool.Middleware
	// ModelMiddlewares wrap every model request, the first listed
	// outermost.
	ModelMiddlewares []tool.ModelMiddleware
	// SystemPrompt is sent as the first message of every request; "" sends
	// none.
	SystemPrompt string
	// MaxTurns caps the model calls of one run; 0 means 50.
	MaxTurns int
	// ToolConcurrency bounds the concurrent tool calls of one step; 0
	// means 16.
	ToolConcurrency int
	// MaxTokens, Temperature and Thinking are copied into every request.
	MaxTokens   int
	Temperature *float64
	Thinking    bool
	// Title sets the thread's title after its first exchange (see
	// TitleOptions); nil sets none (subagents).
	Title *TitleOptions
	// Summarization summarises long threads before a model call (see
	// SummarizationOptions); nil never does.
	Summarization *SummarizationOptions
	// AfterRun is called once a run completed (StopCompleted, no error),
	// with its input and outcome, after the run's last write; the
	// long-term memory queues the turn there. It must not block. nil
	// calls nothing.
	AfterRun func(in Input, out *Outcome)
	// RunEnded is called once every run ended, whatever its outcome
	// (completed, stopped, failed or cancelled: err is the run's error),
	// after AfterRun and before the done event; the program releases
	// there what the run's tools held for the thread, such as its
	// browser session. It must not block. nil calls nothing.
	RunEnded func(in Input, out *Outcome, err error)
	// Store persists threads, runs and a checkpoint after every step; nil
	// keeps the state in memory only (Input.State is the starting state).
	Store store.Store
	// Logger receives the loop's diagnostics; nil discards.
	Logger *slog.Logger
	// Telemetry records the run's spans and metrics (telemetry.Recorder:
	// invoke_agent, chat, execute_tool, checkpoint, title and summary
	// spans); nil records none.
	Telemetry *telemetry.Recorder
}

// Agent is a configured loop. It is immutable after New and safe for
// concurrent runs on different threads; two concurrent runs on the same
// thread race (the last checkpoint wins), so callers serialise them.
type Agent struct {
	opts     Options
	logger   *slog.Logger
	tools    map[string]*tool.Tool
	handlers map[string]tool.Handler // each tool's handler wrapped in the tool middlewares
	defs     []model.ToolDefinition
	names    []string // bound tool names, in bound order
	joined   string   // "a, b, c" for the invalid-tool message
	// summarizer compacts long threads; nil without Options.Summarization.
	summarizer *summarizer
}

// New checks opts and returns an Agent.
func New(opts Options) (*Agent, error) {
	if opts.Model == nil {
		return nil, errors.New("agent: no model")
	}
	opts.MaxTurns = cmp.Or(opts.MaxTurns, defaultMaxTurns)
	opts.ToolConcurrency = cmp.Or(opts.ToolConcurrency, defaultToolConcurrency)
	if opts.MaxTurns < 0 || opts.ToolConcurrency < 0 {
		return nil, errors.New("agent: MaxTurns and ToolConcurrency must not be negative")
	}
	if opts.Title != nil {
		opts.Title = opts.Title.withDefaults()
	}
	a := &Agent{
		opts:     opts,
		logger:   opts.Logger,
		tools:    make(map[string]*tool.Tool, len(opts.Tools)),
		handlers: make(map[string]tool.Handler, len(opts.Tools)),
		defs:     make([]model.ToolDefinition, 0, len(opts.Tools)),
	}
	if opts.Summarization != nil {
		a.summarizer = &summarizer{o: opts.Summarization.withDefaults(), run: opts.Model, tel: opts.Telemetry}
	}
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	names := make([]string, 0, len(opts.Tools))
	for _, t := range opts.Tools {
		if t == nil || t.Handler == nil {
			return nil, fmt.Errorf("agent: tool %d has no handler", len(names))
		}
		if _, dup := a.tools[t.Name]; dup {
			return nil, fmt.Errorf("agent: two tools are named %q", t.Name)
		}
		a.tools[t.Name] = t
		a.handlers[t.Name] = tool.Chain(t.Handler, opts.ToolMiddlewares...)
		a.defs = append(a.defs, t.Definition())
		names = append(names, t.Name)
	}
	a.names, a.joined = names, strings.Join(names, ", ")
	return a, nil
}

// Tools returns the bound tool names, in bound order.
func (a *Agent) Tools() []string {
	out := make([]string, len(a.defs))
	for i, d := range a.defs {
		out[i] = d.Name
	}
	return out
}

// invalidTool is LangGraph's result for a call to a tool that is not
// bound: "Error: {name} is not a valid tool, try one of [a, b]." (joined
// is the bound names joined by ", "). Beyond LangGraph, a name that is a
// bound name corrupted in a way models are known to corrupt names
// (repeated: "lsls", "web_searchweb_search"; other case or surrounding
// space) gets " Did you mean 'ls'?", and an empty name gets a text that
// says so instead of an empty quote.
func invalidTool(name string, bound []string, joined string) *tool.Result {
	if strings.TrimSpace(name) == "" {
		return tool.Errorf("Error: the tool call has no tool name; call one of [%s] by its exact name.", joined)
	}
	msg := fmt.Sprintf("Error: %s is not a valid tool, try one of [%s].", name, joined)
	if guess := corruptedName(name, bound); guess != "" {
		msg += fmt.Sprintf(" Did you mean '%s'?", guess)
	}
	return tool.Errorf("%s", msg)
}

// corruptedName returns the bound name that name is a known corruption
// of: the name repeated (streamed names concatenated), or differing only
// in case or surrounding space; "" when there is none.
func corruptedName(name string, bound []string) string {
	trimmed := strings.TrimSpace(name)
	for _, b := range bound {
		if b == "" {
			continue
		}
		if strings.EqualFold(trimmed, b) {
			return b
		}
		if n := len(trimmed); n > len(b) && n%len(b) == 0 && strings.Repeat(b, n/len(b)) == trimmed {
			return b
		}
	}
	return ""
}

// newID returns a random identifier for messages, runs and threads.
func newID() string { return strings.ToLower(rand.Text()) }
