package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// callJSON is the output of `antler tools call --json` (README.md, "Using it").
type callJSON struct {
	Content  []tool.Block   `json:"content"`
	IsError  bool           `json:"is_error"`
	Artifact any            `json:"artifact"`
	Update   *thread.Update `json:"update"`
	End      bool           `json:"end"`
}

func newToolsCallCmd(g *globals) *cobra.Command {
	var (
		af       assemblyFlags
		args     string
		threadID string
		asJSON   bool
	)
	c := &cobra.Command{
		Use:   "call NAME",
		Short: "Call one assembled tool directly, without a model",
		Long: `Call one assembled tool with the given JSON arguments, as the given user
and thread, and print its result. A deferred tool is callable here.

The exit code is 0 for a successful result, 1 when the tool reported an
error (the result is still printed), 2 for a usage or configuration error.
With --json, print {"content": [...blocks], "is_error", "artifact",
"update", "end"}.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, pos []string) error {
			raw, err := readArgs(args, g.opts.Stdin)
			if err != nil {
				return err
			}
			if err := validateID("thread", threadID); err != nil {
				return err
			}
			g.skipBrokenTools = true
			a, err := newApp(c.Context(), g)
			if err != nil {
				return err
			}
			defer a.Close()
			ts, err := a.toolsForCall(c.Context(), &af, threadID, pos[0])
			if err != nil {
				return err
			}
			if err := a.brokenTools(a.assembler, pos[0]); err != nil {
				return err // the very tool asked for does not build: exit 2
			}
			entry, ok := ts.Lookup(pos[0])
			if !ok {
				return usageErrorf("no tool named %q in the assembled list (nearest: %s)", pos[0],
					strings.Join(toolset.Nearest(pos[0], ts.Names(), 3), ", "))
			}
			res, err := a.callTool(c.Context(), entry.Tool, threadID, af.agent, raw)
			if err != nil {
				return err
			}
			if asJSON {
				out := callJSON{Content: res.Content, IsError: res.IsError, Artifact: res.Artifact, Update: res.Update, End: res.End}
				if out.Content == nil {
					out.Content = []tool.Block{}
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(out); err != nil {
					return err
				}
			} else {
				text := res.TextContent()
				fmt.Fprint(a.stdout, text)
				if !strings.HasSuffix(text, "\n") {
					fmt.Fprintln(a.stdout)
				}
			}
			if res.IsError {
				return &exitError{code: 1, err: fmt.Errorf("tool %s reported an error", entry.Tool.Name)}
			}
			return nil
		},
	}
	af.register(c.Flags())
	c.Flags().StringVar(&args, "args", "{}", "arguments as a JSON object, or - to read them from stdin")
	c.Flags().StringVar(&threadID, "thread", "default", "thread id whose sandbox and state the call uses")
	c.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	return c
}

// toolsForCall returns the tools a run with these flags binds, as
// toolsFor does, but waits only for the MCP servers a call of name needs:
//   - none when name is a config tool or one of the assembler's built-ins,
//     which come before every MCP tool in the bound order (first wins), so
//     that no server is started at all;
//   - every server for tool_search, which searches them all;
//   - otherwise the servers that could expose a tool of that name
//     (Manager.ServersFor), usually one: a hung server elsewhere costs
//     nothing.
//
// The other tools of the list are those of toolsFor, less the MCP tools of
// servers that were not needed.
func (a *app) toolsForCall(ctx context.Context, f *assemblyFlags, threadID, name string) (*toolset.Toolset, error) {
	if f.noMCP {
		return a.toolsFor(ctx, f, threadID)
	}
	without := *f
	without.noMCP = true
	ts, err := a.toolsFor(ctx, &without, threadID)
	if err != nil {
		return nil, err
	}
	if e, ok := ts.Lookup(name); ok && a.precedesMCP(e) {
		return ts, nil
	}
	if name == deferred.ToolSearchName {
		return a.toolsFor(ctx, f, threadID)
	}
	servers, err := a.mcp.ServersFor(name)
	if err != nil {
		return nil, err
	}
	return a.toolsWith(ctx, a.newAssembler(mcpSubset{m: a.mcp, p: a.mcpProgress, servers: servers}), f, threadID)
}

// precedesMCP reports whether an entry of a list assembled without MCP
// keeps its place when MCP tools are added: config tools and the
// assembler's built-ins do; the factory's extra built-ins (setup_agent,
// update_agent), tool_search and the ACP tool come after the MCP tools and
// lose to one of the same name.
func (a *app) precedesMCP(e toolset.Entry) bool {
	switch e.Source {
	case toolset.SourceConfig:
		return true
	case toolset.SourceBuiltin:
		switch e.Tool.Name {
		case builtin.SetupAgentName, builtin.UpdateAgentName, deferred.ToolSearchName:
			return false
		}
		return true
	}
	return false
}

func readArgs(s string, stdin io.Reader) (json.RawMessage, error) {
	data := []byte(s)
	if s == "-" {
		var err error
		if data, err = io.ReadAll(stdin); err != nil {
			return nil, fmt.Errorf("read arguments from stdin: %w", err)
		}
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return nil, usageErrorf("--args: must be a JSON object, like '{\"path\": \"/mnt/user-data/workspace\"}'")
	}
	return json.RawMessage(data), nil
}

// callTool runs one tool outside any agent loop, as the app's user on the
// given thread, through tool.Invoke: a panic or a handler's Go error is an
// error result, as the model would see it; only cancellation is an error.
// The authorization section (as the --user's role), the guardrails
// section and the tool policy's deny rules apply: a denied call does not
// run and its result is the deny.
func (a *app) callTool(ctx context.Context, t *tool.Tool, threadID, agentName string, args json.RawMessage) (res *tool.Result, err error) {
	state, err := a.threadState(ctx, threadID)
	if err != nil {
		return nil, err
	}
	call := &tool.Call{
		ID:        "call_cli_" + randomHex(6),
		Name:      t.Name,
		ThreadID:  threadID,
		UserID:    a.g.user,
		AgentName: agentName,
		Meta:      t.Meta,
		State:     state,
		Context:   map[string]any{"thread_id": threadID, "user_id": a.g.user, "user_role": a.userRole()},
		Logger:    a.logger,
	}
	// Authorization and then the guardrails decide before the tool runs,
	// as in a run; a denied call is printed like any error result.
	if denied, err := a.authorizeCall(ctx, call, args); err != nil || denied != nil {
		return denied, err
	}
	if denied, err := a.guard.Check(ctx, call, args); err != nil || denied != nil {
		return denied, err
	}
	// The tool policy applies as in a run, except that an ask is answered
	// by the operator, who made the call: a deny does not run.
	h := agent.Approval(agent.ApprovalOptions{Decider: appDecider{a}, AskIsAllow: true, Logger: a.logger})(t.Handler)
	res, err = tool.Invoke(ctx, h, call, args)
	if err != nil {
		return nil, err
	}
	return res, a.saveUpdate(ctx, threadID, state, res.Update)
}

// authorizeCall is the authorization section's call gate for one call:
// the deny result when the role may not call the tool (or its MCP
// server), nil when it may or authorization is off.
func (a *app) authorizeCall(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
	mw := a.authz.ToolMiddleware()
	if mw == nil {
		return nil, nil
	}
	allowed := false
	res, err := mw(func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
		allowed = true
		return nil, nil
	})(ctx, call, args)
	if allowed {
		return nil, nil
	}
	return res, err
}

// threadState returns the thread's current state from the store (empty
// for a new thread). A thread of another user is an error.
func (a *app) threadState(ctx context.Context, threadID string) (*thread.State, error) {
	st, err := a.openStore()
	if err != nil {
		return nil, err
	}
	th, err := st.GetThread(ctx, threadID)
	if errors.Is(err, store.ErrNotFound) {
		return &thread.State{}, nil
	}
	if err != nil {
		return nil, err
	}
	if th.UserID != a.g.user {
		return nil, usageErrorf("--thread: thread %q belongs to another user", threadID)
	}
	cp, err := st.LatestCheckpoint(ctx, threadID)
	if errors.Is(err, store.ErrNotFound) {
		return &thread.State{}, nil
	}
	if err != nil {
		return nil, err
	}
	return cp.State, nil
}

// saveUpdate merges a tool's state update into the thread with the
// reducers and checkpoints it, so that what an operator's call changes
// (artifacts, promotions) is there for the next run.
func (a *app) saveUpdate(ctx context.Context, threadID string, state *thread.State, u *thread.Update) error {
	if u.IsZero() {
		return nil
	}
	st, err := a.openStore()
	if err != nil {
		return err
	}
	next := state.Clone()
	if err := next.Apply(u); err != nil {
		return err
	}
	parent, step := "", 0
	switch cp, err := st.LatestCheckpoint(ctx, threadID); {
	case err == nil:
		parent, step = cp.ID, cp.Step+1
	case errors.Is(err, store.ErrNotFound):
		if err := st.CreateThread(ctx, &store.Thread{ID: threadID, UserID: a.g.user}); err != nil && !errors.Is(err, store.ErrExists) {
			return err
		}
	default:
		return err
	}
	return st.PutCheckpoint(ctx, &store.Checkpoint{ThreadID: threadID, ParentID: parent, Step: step, State: next,
		Metadata: map[string]any{"source": "tools_call", "tool": "cli"}})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
