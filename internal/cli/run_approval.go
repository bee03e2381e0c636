package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/agent"
)

// exitApproval is the exit code of `antler run` when the run stopped
// because a tool call waits for the human's approval (README.md).
const exitApproval = 3

// answerFlags are the flags of `antler run` that answer a pending
// approval instead of sending a prompt.
type answerFlags struct {
	approve       bool
	approveThread bool
	reject        string
}

func (f *answerFlags) register(c *cobra.Command, rf *runFlags) {
	fs := c.Flags()
	fs.BoolVar(&f.approve, "approve", false, "approve the call the thread waits for (once), instead of a prompt")
	fs.BoolVar(&f.approveThread, "approve-for-thread", false, "approve the call the thread waits for, and the tool under its rule for the rest of the thread")
	fs.StringVar(&f.reject, "reject", "", "reject the call the thread waits for, with this reason for the model (\"\" for none)")
	fs.BoolVar(&rf.approveAll, "approve-all", false, "run every call the tool policy asks about without asking (deny still refuses)")
}

// text is the user message of a run: the prompt, or the answer the flags
// give. An answer needs --thread and no prompt.
func (f *answerFlags) text(c *cobra.Command, thread string, args []string) (string, error) {
	answers := 0
	for _, set := range []bool{f.approve, f.approveThread, c.Flags().Changed("reject")} {
		if set {
			answers++
		}
	}
	switch {
	case answers > 1:
		return "", usageErrorf("--approve, --approve-for-thread and --reject answer one call: give one of them")
	case answers == 1 && (len(args) > 0 || thread == ""):
		return "", usageErrorf("--approve, --approve-for-thread and --reject answer the call a thread waits for: give --thread and no prompt")
	case answers == 0 && len(args) == 0:
		return "", usageErrorf("run needs a PROMPT: antler run \"question\", or pipe it: echo question | antler run (or answer a waiting call: --thread with --approve, --approve-for-thread or --reject)")
	case f.approve:
		return agent.AnswerApprove, nil
	case f.approveThread:
		return agent.AnswerApproveThread, nil
	case answers == 1:
		return strings.TrimSpace(agent.AnswerReject + ": " + f.reject), nil
	}
	return strings.Join(args, " "), nil
}

// answering reports whether the flags answer a pending approval.
func (f *answerFlags) answering(c *cobra.Command) bool {
	return f.approve || f.approveThread || c.Flags().Changed("reject")
}

// checkPending refuses an answer on a thread where no call waits for
// approval (the answer would reach the model as a plain message).
func (s *session) checkPending(ctx context.Context, answering bool) error {
	if !answering {
		return nil
	}
	st, err := s.app.threadState(ctx, s.threadID)
	if err != nil {
		return err
	}
	if len(st.Approvals) == 0 {
		return usageErrorf("--thread %s: no tool call on this thread waits for approval", s.threadID)
	}
	return nil
}

// approvalWait is the error of a run that stopped for approval: exit
// code exitApproval, with the command that answers it.
func approvalWait(out *agent.Outcome, threadID string) error {
	name, id := "a tool call", ""
	if out != nil && out.State != nil {
		if n := len(out.State.Approvals); n > 0 {
			p := out.State.Approvals[n-1]
			name, id = p.Tool, " (call "+p.CallID+")"
			if p.Subagent != nil {
				name = fmt.Sprintf("%s of the %s subagent", p.Subagent.Tool, p.Subagent.Type)
			}
		}
	}
	return &exitError{code: exitApproval, err: fmt.Errorf("%s%s waits for approval: answer with `antler run --thread %s --approve` (or --approve-for-thread, or --reject REASON)",
		name, id, threadID)}
}

// printApproval shows an approval card: the call and the rule that asks.
func printApproval(w io.Writer, ev agent.Event) {
	p, _ := ev.Data.(map[string]any)
	if c, ok := p["context"].(string); ok {
		fmt.Fprintf(w, "⚠️  %s needs your approval. %s\n", ev.Name, c)
		return
	}
	fmt.Fprintf(w, "⚠️  %s needs your approval: %s\n", ev.Name, summary(string(ev.Arguments), 200))
}

// approvalPrompt is chat's inline prompt for a pending approval.
const approvalPrompt = "approve? [y] once, [a] for this thread, [n] reject (a reason may follow: \"n not that file\"): "

// approvalReply turns what the human typed at the approval prompt into
// the answer the run reads: y/yes/1 approve once, a/always/2 for the
// thread, n/no/3 (with an optional reason after it) reject; other text is
// sent as typed (a rejection with that text as the reason).
func approvalReply(line string) string {
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch strings.ToLower(word) {
	case "y", "yes", "1", agent.AnswerApprove:
		if rest == "" {
			return agent.AnswerApprove
		}
	case "a", "always", "2":
		if rest == "" {
			return agent.AnswerApproveThread
		}
	case "n", "no", "3", agent.AnswerReject:
		return strings.TrimSpace(agent.AnswerReject + ": " + strings.TrimSpace(rest))
	}
	return strings.TrimSpace(line)
}
