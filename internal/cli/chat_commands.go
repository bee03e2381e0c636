package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
)

// chatPreflightTimeout bounds the model check before the first prompt
// (and after /model).
const chatPreflightTimeout = 10 * time.Second

// chatHelp is /help's text.
const chatHelp = `/help            this list
/new             start a new thread
/thread [ID]     show the thread's id, or go on with thread ID
/model [NAME]    show the model and the configured ones, or switch to NAME
/tools           list the tools the agent has on this thread
/prompts         list the MCP servers' prompts
/SERVER:PROMPT [NAME=VALUE ...]  send an MCP server's prompt
/quit            end the chat (also: exit, quit, Ctrl-D)
//text           send "/text" to the model
Keys: ↑ ↓ earlier lines, Ctrl-R search them, Ctrl-C cancel the turn
(at the prompt: clear the line; twice: quit), Ctrl-D quit.`

// parseChatCommand reads a chat command: "/name" and an optional
// argument, or exit/quit alone. A first word with another slash in it
// ("/mnt/user-data/a.txt ...") and "//..." are not commands but text for
// the model.
func parseChatCommand(line string) (name, arg string, ok bool) {
	switch strings.ToLower(line) {
	case "exit", "quit":
		return "quit", "", true
	}
	word, rest, _ := strings.Cut(line, " ")
	if len(word) < 2 || word[0] != '/' || strings.Contains(word[1:], "/") {
		return "", "", false
	}
	return strings.ToLower(word[1:]), strings.TrimSpace(rest), true
}

// command runs a chat command; it reports whether the chat should end.
func (c *chatLoop) command(ctx context.Context, name, arg string) (quit bool) {
	s := c.s
	out := s.app.stderr
	switch name {
	case "quit", "exit", "q":
		return true
	case "help", "h", "?":
		fmt.Fprintln(out, chatHelp)
	case "new":
		c.switchThread("t-" + randomHex(8))
		fmt.Fprintf(out, "new thread %s\n", s.threadID)
	case "thread":
		if arg == "" {
			fmt.Fprintf(out, "thread %s\n", s.threadID)
			break
		}
		if err := validateID("thread", arg); err != nil {
			fmt.Fprintf(out, "%s %s\n", s.paint.red("error:"), strings.TrimPrefix(err.Error(), "--thread: "))
			break
		}
		c.switchThread(arg)
		fmt.Fprintf(out, "thread %s\n", s.threadID)
	case "model":
		c.modelCommand(ctx, arg)
	case "tools":
		c.toolsCommand(ctx)
	case "prompts":
		c.promptsCommand(ctx)
	default:
		if strings.Contains(name, ":") {
			c.promptCommand(ctx, name, arg) // chat_mcp_prompts.go
			break
		}
		fmt.Fprintf(out, "unknown command /%s: /help lists the commands (//%s sends it to the model)\n", name, name)
	}
	return false
}

// switchThread goes on with another thread: nothing of the last one's
// pending answers carries over.
func (c *chatLoop) switchThread(id string) {
	c.s.threadID = id
	c.s.lastOptions = nil
	c.approval = false
}

func (c *chatLoop) modelCommand(ctx context.Context, name string) {
	s := c.s
	out := s.app.stderr
	if name == "" {
		fmt.Fprintf(out, "model %s; configured:", c.model)
		for _, m := range s.app.cfg.Models {
			mark := " "
			if m.Name == c.model {
				mark = "*"
			}
			fmt.Fprintf(out, "\n %s %s (%s)", mark, m.Name, m.Model)
		}
		fmt.Fprintln(out)
		return
	}
	if err := s.app.checkModelFlag(name); err != nil {
		fmt.Fprintf(out, "%s %s\n", s.paint.red("error:"), strings.TrimPrefix(err.Error(), "--model: "))
		return
	}
	old := s.flags.model
	s.flags.model = name
	if err := c.preflight(ctx); err != nil {
		s.flags.model = old
		fmt.Fprintf(out, "%s %s (model stays %s)\n", s.paint.red("error:"), oneLine(err), c.model)
		return
	}
	fmt.Fprintf(out, "model %s\n", c.model)
}

func (c *chatLoop) toolsCommand(ctx context.Context) {
	s := c.s
	lead, err := s.factory.Build(ctx, s.request("chat-tools"))
	if err != nil {
		fmt.Fprintf(s.app.stderr, "%s %s\n", s.paint.red("error:"), oneLine(modelDenied(err)))
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools:\n", len(lead.Tools.Entries))
	for _, e := range lead.Tools.Entries {
		fmt.Fprintf(&b, "  %s (%s", e.Tool.Name, e.Group)
		if e.Deferred {
			b.WriteString(", deferred: found through tool_search")
		}
		b.WriteString(")\n")
	}
	fmt.Fprint(s.app.stderr, b.String())
}

// preflight builds the thread's agent as its next turn would (so config
// and tool problems show before the first prompt) and checks its model:
// a missing or refused API key is an error (exit 2) that says what to
// set; an endpoint that does not answer the check is only a warning
// (some have no model list).
func (c *chatLoop) preflight(ctx context.Context) error {
	s := c.s
	lead, err := s.factory.Build(ctx, s.request("chat-preflight"))
	if err != nil {
		return modelDenied(err)
	}
	c.model = lead.ModelName
	for i, m := range s.app.cfg.Models {
		if m.Name != lead.ModelName {
			continue
		}
		cm, err := s.app.g.opts.Registry.BuildModel(ctx, s.app.env, m, i)
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("model %q: %w", m.Name, err)}
		}
		p, ok := cm.(pinger)
		if !ok {
			return nil
		}
		pctx, cancel := context.WithTimeout(ctx, chatPreflightTimeout)
		err = p.Ping(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if keyRefused(err) {
			return &exitError{code: 2, err: err}
		}
		s.warn(fmt.Sprintf("model %s: the endpoint check failed (%s); the chat goes on", m.Name, oneLine(err)))
		return nil
	}
	return nil
}

// keyRefused reports whether err says the model's API key is missing
// (a provider error without a status or a cause) or refused (401, 403).
func keyRefused(err error) bool {
	var pe *model.ProviderError
	if !errors.As(err, &pe) {
		return false
	}
	return pe.StatusCode == 401 || pe.StatusCode == 403 || pe.StatusCode == 0 && pe.Err == nil && pe.Hint != ""
}

// request is the agent request of a turn of the session's thread.
func (s *session) request(runID string) agent.Request {
	return agent.Request{ThreadID: s.threadID, UserID: s.app.g.user, UserRole: s.app.userRole(), RunID: runID,
		AgentName: s.flags.agentName, ModelName: s.flags.model, IsBootstrap: s.flags.bootstrap,
		SubagentEnabled: s.flags.subagents, NoMCP: s.flags.noMCP}
}
