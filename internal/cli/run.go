package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/tool"
)

// runFlags are the flags of `run` and `chat` (README.md, "Using it").
type runFlags struct {
	thread    string
	agentName string
	model     string
	bootstrap bool
	subagents bool
	noMCP     bool
	asJSON    bool
	// verbose shows the whole text of a failed tool call, not only its
	// first line.
	verbose bool
	// approveAll runs the calls the tool policy asks about (run only).
	approveAll bool
}

func (f *runFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.thread, "thread", "", "thread id (default: a new thread)")
	fs.StringVar(&f.agentName, "agent", "", "custom agent name")
	fs.StringVar(&f.model, "model", "", "model name (default: the agent's, else the first configured model)")
	fs.BoolVar(&f.bootstrap, "bootstrap", false, "run the agent builder (adds setup_agent)")
	fs.BoolVar(&f.subagents, "subagents", false, "let the agent delegate with the task tool")
	fs.BoolVar(&f.noMCP, "no-mcp", false, "leave out MCP tools")
	fs.BoolVar(&f.asJSON, "json", false, "print the event stream, one JSON event per line")
	fs.BoolVar(&f.verbose, "verbose", false, "show the whole error of a failed tool call, not only its first line")
}

func newRunCmd(g *globals) *cobra.Command {
	var f runFlags
	var af answerFlags
	c := &cobra.Command{
		Use:   "run [flags] [PROMPT]",
		Short: "Run one agent turn and stream its answer",
		Long: `Run one agent turn on a thread: the answer streams to stdout, tool calls
are shown on stderr as they start and end. With --json, stdout carries one
JSON event per line (message_delta, message, tool_start, tool_end, state,
task_*, clarification, approval, error, done).

A run stopped by ask_clarification resumes with the next run on the same
--thread. A run stopped because the tool policy asks before a call exits 3
and names the call; answer it with --thread and --approve,
--approve-for-thread or --reject REASON (no prompt). --approve-all runs
such calls without asking. Ctrl-C cancels the run.

Without a PROMPT, the prompt is read from stdin when stdin is not a
terminal: echo "summarise README.md" | antler run`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 && !af.answering(c) {
				p, err := stdinPrompt(c.InOrStdin())
				if err != nil {
					return err
				}
				if p != "" {
					args = []string{p}
				}
			}
			text, err := af.text(c, f.thread, args)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt)
			defer stop()
			s, err := newSession(ctx, g, &f)
			if err != nil {
				return err
			}
			defer s.close()
			if err := s.checkPending(ctx, af.answering(c)); err != nil {
				return err
			}
			out, err := s.turn(ctx, text)
			if err != nil {
				if errors.As(err, new(*exitError)) || errors.As(err, new(*config.Error)) {
					return err // a usage error (--model the role may not use) or a config error: exit 2
				}
				return &exitError{code: 1, err: err}
			}
			if out.Reason == agent.StopApproval {
				return approvalWait(out, s.threadID)
			}
			if out.Reason == agent.StopError && out.Error != "" {
				// The model call failed after its retries: the user read
				// the explanation as the answer; the exit says it failed.
				return &exitError{code: 1, err: errors.New(out.Error)}
			}
			if !f.asJSON && out.Reason != agent.StopCompleted && out.Reason != agent.StopClarification {
				fmt.Fprintf(s.app.stderr, "run stopped: %s\n", out.Reason)
			}
			if !f.asJSON && f.thread == "" {
				fmt.Fprintf(s.app.stderr, "thread: %s\n", s.threadID)
			}
			return nil
		},
	}
	f.register(c)
	af.register(c, &f)
	return c
}

// session runs turns of one thread: the app, its store and the flags.
type session struct {
	app     *app
	flags   *runFlags
	factory *agent.Factory
	store   store.Store
	// leases is nil except on the Postgres backend (see runLeases).
	leases   *runLeases
	threadID string
	status   *statusLine
	paint    *painter
	// running names the tool calls still running when the last turn
	// ended (a cancelled turn: what Ctrl-C stopped).
	running []string
	// lastClarification holds the options of a pending clarification, so
	// that chat can take "2" for the second option.
	lastOptions []string
}

func newSession(ctx context.Context, g *globals, f *runFlags) (*session, error) {
	threadID := f.thread
	if threadID == "" {
		threadID = "t-" + randomHex(8)
	} else if err := validateID("thread", threadID); err != nil {
		return nil, err
	}
	g.telemetry = true // runs are traced (wire_telemetry.go)
	a, err := newApp(ctx, g)
	if err != nil {
		return nil, err
	}
	a.approveAll = f.approveAll
	if err := a.checkModelFlag(f.model); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.refuseUnenforced(); err != nil {
		a.Close()
		return nil, err
	}
	st, leases, err := a.sessionStore()
	if err != nil {
		a.Close()
		return nil, err
	}
	fac, err := a.newFactory(st)
	if err != nil {
		a.Close()
		return nil, err
	}
	return &session{app: a, flags: f, factory: fac, store: st, leases: leases, threadID: threadID,
		status: newStatusLine(g.opts.Stderr, g.opts.Getenv), paint: newPainter(g.opts.Stderr, g.opts.Getenv)}, nil
}

func (s *session) close() { s.app.Close() }

// turn runs the agent once with the user's text and renders its events.
func (s *session) turn(ctx context.Context, text string) (*agent.Outcome, error) {
	runID := "run-" + randomHex(8)
	release, err := s.leases.hold(ctx, s.store, s.threadID, s.app.g.user, s.flags.agentName, runID)
	if err != nil {
		return nil, err
	}
	defer release()
	lead, err := s.factory.Build(ctx, s.request(runID))
	if err != nil {
		return nil, modelDenied(err)
	}
	r := &renderer{w: s.app.stdout, errw: s.app.stderr, asJSON: s.flags.asJSON, status: s.status,
		tools: newToolLine(s.status, time.Now), verbose: s.flags.verbose, paint: s.paint}
	if s.flags.asJSON {
		r.enc = json.NewEncoder(s.app.stdout)
	}
	s.status.show("thinking…")
	stopTicks := r.tools.tickEvery(toolLineTick, func() {
		if !s.app.elicit.asking() { // the line would overwrite the question
			r.tick()
		}
	})
	out, err := lead.Agent.Invoke(ctx, lead.Input(model.UserText(text)), r.event)
	stopTicks()
	s.status.clear()
	r.finish()
	s.lastOptions = r.options
	s.running = r.tools.names()
	if err != nil {
		var pe *model.ProviderError
		if errors.As(err, &pe) {
			return out, err // already names the model entry and what to set
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return out, err // cancelled: not the model's failure
		}
		return out, fmt.Errorf("model %q: %w", lead.ModelName, err)
	}
	return out, nil
}

// renderer prints a run's events as text or JSON lines.
type renderer struct {
	w, errw io.Writer
	enc     *json.Encoder
	asJSON  bool
	status  *statusLine
	midLine bool
	options []string
	// streamed is the text streamed of the current answer, so that what
	// a model middleware adds after the stream (the safety finish
	// reason's explanation) is printed too.
	streamed strings.Builder
	// tools is the live line of running tool calls (nil: none); mu
	// serialises events and its ticks (renderer.tick).
	tools *toolLine
	mu    sync.Mutex
	// verbose prints a failed call's whole text (failureText).
	verbose bool
	paint   *painter
}

func (r *renderer) event(ev agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.asJSON {
		_ = r.enc.Encode(ev)
		return
	}
	r.status.clear()
	switch ev.Type {
	case agent.EventMessageDelta:
		if ev.Delta != "" {
			fmt.Fprint(r.w, ev.Delta)
			r.streamed.WriteString(ev.Delta)
			r.midLine = !strings.HasSuffix(ev.Delta, "\n")
		}
	case agent.EventMessage:
		if ev.Message != nil {
			if rest, ok := strings.CutPrefix(ev.Message.Content, r.streamed.String()); ok && rest != "" {
				fmt.Fprint(r.w, rest)
				r.midLine = !strings.HasSuffix(rest, "\n")
			}
		}
		r.streamed.Reset()
	case agent.EventToolStart:
		r.endLine()
		fmt.Fprintf(r.errw, "→ %s %s\n", ev.Name, summary(string(ev.Arguments), 80))
		r.tools.start(ev)
	case agent.EventToolEnd:
		fmt.Fprintln(r.errw, toolEndLine(ev, r.verbose, r.paint))
		r.status.show("thinking…")
		r.tools.end(ev)
	case tool.ProgressEvent, agent.EventTaskRunning:
		r.tools.report(ev)
	case agent.EventClarification:
		r.endLine()
		if ev.Message != nil {
			fmt.Fprintln(r.w, ev.Message.Content)
		}
		r.options = clarificationOptions(ev.Data)
	case agent.EventApproval:
		r.endLine()
		printApproval(r.w, ev)
	case agent.EventTaskStarted, agent.EventTaskCompleted, agent.EventTaskFailed:
		r.endLine()
		fmt.Fprintf(r.errw, "· %s %s\n", ev.Type, ev.ToolCallID)
	case agent.EventState:
		// The thread's automatic title, set after its first exchange.
		if ev.Name == agent.TitleNode && ev.Update != nil && ev.Update.Title != nil {
			r.endLine()
			fmt.Fprintf(r.errw, "· title: %s\n", *ev.Update.Title)
		}
	}
}

func (r *renderer) endLine() {
	if r.midLine {
		fmt.Fprintln(r.w)
		r.midLine = false
	}
}

func (r *renderer) finish() {
	if !r.asJSON {
		r.endLine()
	}
}

// clarificationOptions returns the option values of a human_input
// payload.
func clarificationOptions(data any) []string {
	p, ok := data.(map[string]any)
	if !ok {
		return nil
	}
	opts, _ := p["options"].([]any)
	var out []string
	for _, o := range opts {
		if m, ok := o.(map[string]any); ok {
			if v, ok := m["value"].(string); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// statusLine shows a transient status on a terminal; elsewhere (or with
// NO_COLOR set, which also asks for plain output) it prints nothing.
type statusLine struct {
	w       io.Writer
	enabled bool
	shown   bool
}

func newStatusLine(w io.Writer, getenv func(string) string) *statusLine {
	f, ok := fileOf(w)
	return &statusLine{w: w, enabled: ok && term.IsTerminal(int(f.Fd())) && getenv("NO_COLOR") == ""}
}

func (s *statusLine) show(text string) {
	if s == nil || !s.enabled {
		return
	}
	fmt.Fprintf(s.w, "\r\x1b[2K%s", text)
	s.shown = true
}

func (s *statusLine) clear() {
	if s == nil || !s.shown {
		return
	}
	fmt.Fprint(s.w, "\r\x1b[2K")
	s.shown = false
}
