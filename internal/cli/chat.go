package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/agent"
)

func newChatCmd(g *globals) *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Chat with the agent on one thread",
		Long: `Chat with the agent: each line you type is one turn on the same thread.
Answers stream as they arrive and tool calls are shown as they start and
end (a failed call with the first line of its error; --verbose shows all
of it). Lines starting with / are chat commands: /help lists them
(/new, /thread, /model, /tools, /quit); "exit" and "quit" end the chat.

On a terminal, lines can be edited and the arrow keys recall earlier
lines (Ctrl-R searches them); the history is kept in
$XDG_STATE_HOME/antler/chat_history (default ~/.local/state/antler),
mode 0600, the newest 1000 lines. Ctrl-C cancels the running turn (the
model's answer, a tool call) and returns to the prompt, where the next
line goes on with the same thread. At the prompt, Ctrl-C clears the line;
pressed again at the empty prompt, or Ctrl-D, it ends the chat.

When the agent asks for clarification, answer on the next line (a number
picks one of the listed options). When the tool policy asks before a
call, the chat asks you inline: y approves it once, a approves the tool
for the rest of the thread, n rejects it (a reason for the model may
follow: "n not that file"); the turn then goes on. Ctrl-C there leaves
the call waiting: the next message on the thread answers it.

When an MCP server asks for input during a call (elicitation), the chat
asks each field inline (Enter takes the default shown in brackets), then
whether to send it: y accepts, n declines, c cancels; Ctrl-C cancels the
request and the turn goes on. A request to open an address shows it;
the chat opens nothing. antler run and serve decline such requests.

Before the first prompt the chat checks the model: a missing or refused
API key ends it with what to set.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := newSession(c.Context(), g, &f)
			if err != nil {
				return err
			}
			defer s.close()
			return s.chat(c.Context())
		},
	}
	f.register(c)
	return c
}

// chatLoop is one chat: the session, its input and what the last turn
// left pending.
type chatLoop struct {
	s  *session
	in lineReader
	// turn holds the terminal's Ctrl-C watch while a turn runs; an MCP
	// server's elicitation pauses it to ask (chat_elicit.go).
	turn *chatTurn
	// approval: the last turn stopped for a pending approval, so the next
	// line is read as its answer.
	approval bool
	// model is the resolved model of the thread's agent (the preflight's).
	model string
}

func (s *session) chat(ctx context.Context) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	var promptw io.Writer
	if !s.flags.asJSON {
		promptw = s.app.stderr
	}
	in := newLineReader(ctx, s.app.g.opts.Stdin, s.app.stdout, promptw, chatHistoryPath(s.app.g.opts.Getenv), sigs, s.warn)
	defer in.close()
	c := &chatLoop{s: s, in: in, turn: &chatTurn{in: in}}
	s.app.startMCPTaskPoller(nil)
	defer s.app.elicit.attach(c.elicit)()
	if err := c.preflight(ctx); err != nil {
		return err
	}
	if !s.flags.asJSON {
		fmt.Fprintf(s.app.stderr, "%s thread %s · model %s — /help for commands, Ctrl-D to quit\n", s.paint.dim("·"), s.threadID, c.model)
	}
	return c.run(ctx)
}

// warn prints a warning for the human on stderr.
func (s *session) warn(msg string) {
	fmt.Fprintf(s.app.stderr, "%s %s\n", s.paint.yellow("warning:"), msg)
}

// run reads lines until the chat ends: Ctrl-D, the end of the input, a
// second Ctrl-C at an empty prompt, /quit, or the chat's context.
func (c *chatLoop) run(ctx context.Context) error {
	s := c.s
	armed := false // Ctrl-C was pressed at the prompt: once more quits
	for ctx.Err() == nil {
		prompt := "> "
		if c.approval {
			fmt.Fprintln(s.app.stderr, approvalPrompt)
			prompt = "approve> "
		}
		if s.flags.asJSON {
			prompt = ""
		}
		raw, err := c.in.readLine(prompt)
		switch {
		case errors.Is(err, errCtrlC):
			if c.approval {
				c.approval = false
				fmt.Fprintln(s.app.stderr, s.paint.dim("(the call still waits for approval: the next message on this thread answers it; /new starts another thread)"))
				continue
			}
			if armed {
				return nil
			}
			armed = true
			fmt.Fprintln(s.app.stderr, s.paint.dim("(Ctrl-C again or Ctrl-D to quit)"))
			continue
		case err != nil:
			if !s.flags.asJSON {
				fmt.Fprintln(s.app.stderr) // end the prompt's line
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		armed = false
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		c.in.remember(line)
		if !c.approval {
			if cmd, arg, ok := parseChatCommand(line); ok {
				if quit := c.command(ctx, cmd, arg); quit {
					return nil
				}
				continue
			}
			line = strings.TrimPrefix(line, "/") // "//x" sends "/x"
		}
		c.send(ctx, line)
	}
	return nil
}

// send runs one turn with the user's line; Ctrl-C cancels it.
func (c *chatLoop) send(ctx context.Context, line string) {
	s := c.s
	if c.approval {
		line = approvalReply(line)
	} else if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(s.lastOptions) {
		line = s.lastOptions[n-1]
	}
	turnCtx, cancel := context.WithCancel(ctx)
	c.turn.begin(cancel)
	out, err := s.turn(turnCtx, line)
	c.turn.finish()
	s.app.elicit.wait()
	cancelled := turnCtx.Err() != nil && ctx.Err() == nil
	cancel()
	c.approval = err == nil && !cancelled && out.Reason == agent.StopApproval
	switch {
	case cancelled:
		what := "the model was answering"
		if len(s.running) > 0 {
			what = strings.Join(s.running, ", ") + " was running"
		}
		fmt.Fprintf(s.app.stderr, "%s\n", s.paint.yellow("(turn cancelled: "+what+")"))
	case err != nil:
		fmt.Fprintf(s.app.stderr, "%s %s\n", s.paint.red("error:"), oneLine(err))
	case !s.flags.asJSON && out.Reason != agent.StopCompleted && out.Reason != agent.StopClarification && !c.approval:
		fmt.Fprintf(s.app.stderr, "(run stopped: %s)\n", out.Reason)
	}
}
