package acptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// noResponse is the result when the agent sent no message text.
const noResponse = "(no response)"

// timeoutText is DeerFlow's text for an agent that ran out of time.
func timeoutText(agent string, seconds int) string {
	return fmt.Sprintf("Error: ACP agent '%s' timed out after %d seconds without responding. "+
		"The agent subprocess has been terminated. If this agent handles long-running tasks, "+
		"increase acp_agents.%s.timeout_seconds in config.yaml.", agent, seconds, agent)
}

// notFoundText is DeerFlow's text for a command that is not on PATH, with
// its hints for the codex CLI (which does not speak ACP) and mcode.
func notFoundText(agent, command string, lookPath func(string) (string, error)) string {
	msg := fmt.Sprintf("Error invoking ACP agent '%s': Command '%s' was not found on PATH.", agent, command)
	if command == "codex-acp" {
		if _, err := lookPath("codex"); err == nil {
			return msg + " The installed `codex` CLI does not speak ACP directly. Install a Codex ACP adapter " +
				"(for example `npx @zed-industries/codex-acp`) or update `acp_agents.codex.command` and `args` in config.yaml."
		}
	}
	if agent == "mcode" {
		return msg + " Install it with `npm install --global @minimax-ai/code`, run `mcode login`, and restart Antler " +
			"so it inherits the updated PATH. If Antler runs in a container, ensure `mcode` is installed and authenticated inside it."
	}
	return msg + fmt.Sprintf(" Install the agent binary or update `acp_agents.%s.command` in config.yaml.", agent)
}

// invocationError is the result for any other failure.
func invocationError(agent, detail string) *tool.Result {
	return &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: fmt.Sprintf("Error invoking ACP agent '%s': %s", agent, detail)}}, IsError: true}
}

func errorResult(text string) *tool.Result {
	return &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: text}}, IsError: true}
}

// workDir returns the call's ACP workspace, creating it, and whether it
// is the per-thread one (false: the global fallback, for a call without a
// valid thread).
func (inv *Invoker) workDir(call *tool.Call) (dir, user, thread string, perThread bool, err error) {
	if call != nil && call.ThreadID != "" {
		user = call.UserID
		if user == "" {
			user = "default"
		}
		tp, perr := inv.layout.ThreadPaths(user, call.ThreadID)
		if perr == nil {
			dir, perThread, thread = tp.ACPWorkspace, true, call.ThreadID
		} else {
			inv.logger.Warn("invalid thread for ACP workspace; using the global one", "thread_id", call.ThreadID, "err", perr)
		}
	}
	if !perThread {
		dir, user = filepath.Join(inv.layout.Home(), "acp-workspace"), ""
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", "", false, err
	}
	return dir, user, thread, perThread, nil
}

// mcpServers returns the enabled MCP servers in ACP form, or an empty
// list (with a warning) when the extensions cannot be read or converted.
func (inv *Invoker) mcpServers(agent string) []acp.McpServer {
	if inv.extensions == nil {
		return []acp.McpServer{}
	}
	ext, err := inv.extensions()
	if err == nil {
		var servers []acp.McpServer
		if servers, err = mcpServers(ext); err == nil {
			return servers
		}
	}
	inv.logger.Warn("invalid MCP server configuration for ACP agent; continuing without MCP servers", "agent", agent, "err", err)
	return []acp.McpServer{}
}

// Invoke runs one prompt on agent a (named name) and returns the tool
// result: the agent's message text, "(no response)", or an error text
// from DeerFlow's invoke_acp_agent_tool.py. A Go error is returned only when ctx is cancelled;
// the agent's process group is killed in every case before Invoke
// returns.
func (inv *Invoker) Invoke(ctx context.Context, call *tool.Call, name string, a config.ACPAgent, prompt string) (*tool.Result, error) {
	log := inv.logger.With("agent", name)
	log.Info("invoking ACP agent", "prompt_chars", len(prompt))
	dir, user, thread, perThread, err := inv.workDir(call)
	if err != nil {
		return invocationError(name, "cannot create the agent workspace: "+stripPath(err)), nil
	}
	mask := inv.masker(dir, user, thread, perThread)
	servers := inv.mcpServers(name)

	path, err := exec.LookPath(a.Command)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return errorResult(notFoundText(name, a.Command, exec.LookPath)), nil
		}
		return invocationError(name, err.Error()), nil
	}
	ws, err := openWorkspace(dir)
	if err != nil {
		return invocationError(name, "cannot open the agent workspace: "+stripPath(err)), nil
	}
	defer ws.Close()

	p, err := inv.start(ctx, path, a, dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errorResult(notFoundText(name, a.Command, exec.LookPath)), nil
		}
		return invocationError(name, mask(err.Error())), nil
	}
	if inv.onStart != nil {
		inv.onStart(p.cmd.Process.Pid)
	}
	log.Info("spawned ACP agent", "command", path, "args", a.Args, "cwd", dir, "pid", p.cmd.Process.Pid)

	r := inv.connect(name, a, ws, p, log, mask, acpProgress(call, mask))
	timeout := defaultTimeout
	if a.TimeoutSeconds > 0 {
		timeout = time.Duration(a.TimeoutSeconds) * time.Second
	}
	r.seconds = int(timeout / time.Second)
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	sess, step, err := r.openSession(tctx, a, dir, servers)
	if err != nil {
		return r.failed(ctx, tctx, step, err)
	}
	return r.prompt(ctx, tctx, sess, prompt)
}

// masker returns the function that hides host paths of the call's
// workspace dir in texts shown to the model: the thread's virtual paths
// for a per-thread workspace, the ACP workspace's for the global one.
func (inv *Invoker) masker(dir, user, thread string, perThread bool) func(string) string {
	return func(s string) string {
		if perThread {
			return inv.layout.Mask(user, thread, s)
		}
		return vpath.MaskFolder(s, dir, vpath.ACPWorkspace)
	}
}

// agentRun is one Invoke's running agent: its process, its ACP connection
// and what is needed to report on them.
type agentRun struct {
	inv  *Invoker
	name string
	log  *slog.Logger
	mask func(string) string
	p    *process
	cl   *client
	conn *acp.ClientSideConnection
	// seconds is the invocation's timeout, for the timeout text.
	seconds int
}

// connect opens the ACP connection over the agent's stdin and stdout,
// served by a client on workspace ws.
func (inv *Invoker) connect(name string, a config.ACPAgent, ws *workspace, p *process, log *slog.Logger, mask func(string) string,
	report func(tool.Progress)) *agentRun {
	cl := &client{agent: name, autoApprove: a.AutoApprovePermissions, ws: ws, logger: log, report: report}
	conn := acp.NewClientSideConnection(cl, p.stdin, p.stdout)
	conn.SetLogger(log.With("component", "acp-go-sdk"))
	p.exited = conn.Done()
	return &agentRun{inv: inv, name: name, log: log, mask: mask, p: p, cl: cl, conn: conn}
}

// openSession initializes the connection and opens a session in dir with
// the MCP servers (and the agent's model, if set). On failure it returns
// the protocol step that failed.
func (r *agentRun) openSession(tctx context.Context, a config.ACPAgent, dir string, servers []acp.McpServer) (acp.SessionId, string, error) {
	if _, err := r.conn.Initialize(tctx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{
			Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
		},
		ClientInfo: &acp.Implementation{Name: "antler", Title: acp.Ptr("Antler"), Version: r.inv.version},
	}); err != nil {
		return "", "initialize", err
	}
	req := acp.NewSessionRequest{Cwd: dir, McpServers: servers}
	if a.Model != nil && *a.Model != "" {
		req.Meta = map[string]any{"model": *a.Model}
	}
	sess, err := r.conn.NewSession(tctx, req)
	if err != nil {
		return "", "session/new", err
	}
	return sess.SessionId, "", nil
}

// failed classifies an error of a protocol step: the caller's
// cancellation (ctx), the timeout (tctx), or a failure of the agent.
func (r *agentRun) failed(ctx, tctx context.Context, step string, err error) (*tool.Result, error) {
	if ctx.Err() != nil {
		r.p.stop(0)
		return nil, ctx.Err()
	}
	if tctx.Err() != nil {
		r.p.stop(0)
		r.log.Error("ACP agent timed out; process group killed", "timeout_s", r.seconds, "step", step)
		return errorResult(timeoutText(r.name, r.seconds)), nil
	}
	r.p.stop(r.inv.shutdownGrace)
	r.log.Error("ACP agent invocation failed", "step", step, "err", err)
	return invocationError(r.name, r.mask(r.p.describe(step, err))), nil
}

// promptOutcome is the answer to session/prompt.
type promptOutcome struct {
	resp acp.PromptResponse
	err  error
}

// prompt sends the prompt to session sess and waits for the answer, the
// timeout (tctx) or the caller's cancellation (ctx).
func (r *agentRun) prompt(ctx, tctx context.Context, sess acp.SessionId, prompt string) (*tool.Result, error) {
	// The prompt runs on a context of its own so that a cancelled call
	// can first ask the agent to stop (session/cancel) and only then
	// give up on it.
	pctx, pcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer pcancel()
	done := make(chan promptOutcome, 1)
	go func() {
		resp, err := r.conn.Prompt(pctx, acp.PromptRequest{SessionId: sess, Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}})
		done <- promptOutcome{resp, err}
	}()

	select {
	case out := <-done:
		if out.err != nil {
			pcancel()
			return r.failed(ctx, tctx, "session/prompt", out.err)
		}
		return r.finish(out.resp), nil
	case <-tctx.Done():
		return r.abandon(ctx, sess, done, pcancel)
	}
}

// abandon ends a prompt that ran out of time or whose caller gave up
// (then the agent is first asked to stop): the prompt's context is
// cancelled, the agent killed, and abandon waits for the prompt to return.
func (r *agentRun) abandon(ctx context.Context, sess acp.SessionId, done <-chan promptOutcome, pcancel context.CancelFunc) (*tool.Result, error) {
	cancelled := ctx.Err() != nil
	got := false
	if cancelled {
		got = r.askToStop(sess, done)
	}
	pcancel()
	r.p.stop(0)
	if !got {
		<-done // returns once the connection is gone
	}
	if cancelled {
		return nil, ctx.Err()
	}
	r.log.Error("ACP agent timed out; process group killed", "timeout_s", r.seconds, "step", "session/prompt")
	return errorResult(timeoutText(r.name, r.seconds)), nil
}

// askToStop sends session/cancel for a caller that gave up and gives the
// agent the cancel grace to answer the prompt (stopReason "cancelled"). It
// reports whether the answer came.
func (r *agentRun) askToStop(sess acp.SessionId, done <-chan promptOutcome) bool {
	go func() { _ = r.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: sess}) }()
	grace := time.NewTimer(r.inv.cancelGrace)
	defer grace.Stop()
	select {
	case out := <-done:
		if out.err == nil {
			r.log.Info("ACP agent acknowledged cancellation", "stop_reason", out.resp.StopReason)
		}
		return true
	case <-grace.C:
		return false
	}
}

// finish ends a turn the agent completed and returns the text it sent.
func (r *agentRun) finish(resp acp.PromptResponse) *tool.Result {
	// The turn is over. Closing stdin lets the agent exit; updates that
	// straggle in after the prompt response are still collected meanwhile.
	r.p.stop(r.inv.shutdownGrace)
	text := r.mask(r.cl.collected())
	r.log.Info("ACP agent finished", "stop_reason", resp.StopReason, "chars", len(text))
	if text == "" {
		return tool.Text(noResponse)
	}
	return tool.Text(text)
}

// process is a running agent.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File // read end of the agent's stdout
	stderr *tailBuffer

	// exited is closed when the agent's stdout reaches EOF, which is
	// how a well-behaved agent exits (set once the connection exists).
	exited <-chan struct{}

	stopOnce sync.Once
}

// start spawns the agent in its own process group, with TRACEPARENT of
// the span in ctx (the acp tool call's) in its environment. ctx does not
// bound the process's life: Invoke stops it.
func (inv *Invoker) start(ctx context.Context, path string, a config.ACPAgent, dir string) (*process, error) {
	cmd := exec.Command(path, a.Args...)
	cmd.Dir = dir
	cmd.Env = telemetry.InjectEnv(ctx, childEnv(inv.environ(), a.Env))
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	p := &process{cmd: cmd, stdin: stdin, stdout: r, stderr: &tailBuffer{max: 4096}}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, err
	}
	_ = w.Close() // the child holds its own copy
	return p, nil
}

// stop ends the agent: stdin is closed, the agent gets up to grace to exit
// by itself (its stdout reaching EOF), then its whole process group is
// killed and the agent reaped. Killing before reaping means the group id
// cannot have been reused. stop is idempotent.
func (p *process) stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		_ = p.stdin.Close()
		if grace > 0 && p.exited != nil {
			t := time.NewTimer(grace)
			select {
			case <-p.exited:
			case <-t.C:
			}
			t.Stop()
		}
		killGroup(p.cmd.Process.Pid)
		_ = p.cmd.Wait()
		_ = p.stdout.Close()
	})
}

// describe builds the detail of an invocation error: the failing step,
// the error, how the agent exited and the end of its stderr.
func (p *process) describe(step string, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s failed: %s", step, errText(err))
	if st := p.cmd.ProcessState; st != nil && st.Exited() {
		fmt.Fprintf(&b, " (agent exited with status %d)", st.ExitCode())
	}
	if tail := strings.TrimSpace(p.stderr.String()); tail != "" {
		fmt.Fprintf(&b, "; agent stderr: %s", tail)
	}
	return b.String()
}

// errText renders an SDK error readably: "message: detail" for JSON-RPC
// errors instead of their JSON form.
func errText(err error) string {
	var re *acp.RequestError
	if !errors.As(err, &re) {
		return err.Error()
	}
	msg := re.Message
	if m, ok := re.Data.(map[string]any); ok {
		for _, k := range []string{"error", "details", "message"} {
			if v, ok := m[k].(string); ok && v != "" {
				return msg + ": " + v
			}
		}
	}
	if re.Data != nil {
		return fmt.Sprintf("%s: %v", msg, re.Data)
	}
	return msg
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
