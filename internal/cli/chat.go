package cli

import (
	"bufio"
	"context"
	"fmt"
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
end. When the agent asks for clarification, answer on the next line (a
number picks one of the listed options). When the tool policy asks before
a call, the chat asks you inline: y approves it once, a approves the tool
for the rest of the thread, n rejects it (a reason for the model may
follow: "n not that file"); the turn then goes on. Ctrl-C cancels the
running turn; at the prompt, Ctrl-C or Ctrl-D ends the chat.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := newSession(c.Context(), g, &f)
			if err != nil {
				return err
			}
			defer s.close()
			return s.chat(c.Context(), bufio.NewScanner(g.opts.Stdin))
		},
	}
	f.register(c)
	return c
}

func (s *session) chat(ctx context.Context, in *bufio.Scanner) error {
	in.Buffer(make([]byte, 64*1024), 1<<20)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	if !s.flags.asJSON {
		fmt.Fprintf(s.app.stderr, "thread %s — Ctrl-D to quit\n", s.threadID)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		for in.Scan() {
			select {
			case lines <- in.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	approval := false // the last turn stopped for a pending approval
	for {
		switch {
		case approval:
			fmt.Fprint(s.app.stderr, approvalPrompt)
		case !s.flags.asJSON:
			fmt.Fprint(s.app.stderr, "> ")
		}
		var line string
		select {
		case <-ctx.Done():
			return nil
		case <-sigs:
			fmt.Fprintln(s.app.stderr)
			return nil
		case l, ok := <-lines:
			if !ok {
				return nil
			}
			line = strings.TrimSpace(l)
		}
		if line == "" {
			continue
		}
		if approval {
			line = approvalReply(line)
		} else if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(s.lastOptions) {
			line = s.lastOptions[n-1]
		}
		turnCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			select {
			case <-sigs:
				cancel()
			case <-done:
			}
		}()
		out, err := s.turn(turnCtx, line)
		close(done)
		cancelled := turnCtx.Err() != nil && ctx.Err() == nil
		cancel()
		approval = err == nil && !cancelled && out.Reason == agent.StopApproval
		switch {
		case cancelled:
			fmt.Fprintln(s.app.stderr, "(turn cancelled)")
		case err != nil:
			fmt.Fprintf(s.app.stderr, "error: %s\n", oneLine(err))
		case !s.flags.asJSON && out.Reason != agent.StopCompleted && out.Reason != agent.StopClarification && !approval:
			fmt.Fprintf(s.app.stderr, "(run stopped: %s)\n", out.Reason)
		}
	}
}
