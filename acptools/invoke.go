package acptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// NoResponse is the result when the agent sent no message text.
const NoResponse = "(no response)"

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
		if servers, err = MCPServers(ext); err == nil {
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
	mask := func(s string) string {
		if perThread {
			return inv.layout.Mask(user, thread, s)
		}
		return vpath.MaskFolder(s, dir, vpath.ACPWorkspace)
	}
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

	p, err := inv.start(path, a, dir)
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

	cl := &client{agent: name, autoApprove: a.AutoApprovePermissions, ws: ws, logger: log}
	conn := acp.NewClientSideConnection(cl, p.stdin, p.stdout)
	conn.SetLogger(log.With("component", "acp-go-sdk"))
	p.exited = conn.Done()

	timeout := DefaultTimeout
	if a.TimeoutSeconds > 0 {
		timeout = time.Duration(a.TimeoutSeconds) * time.Second
	}
	seconds := int(timeout / time.Second)
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// failed classifies an error of a protocol step: the caller's
	// cancellation, the timeout, or a failure of the agent.
	failed := func(step string, err error) (*tool.Result, error) {
		if ctx.Err() != nil {
			p.stop(0)
			return nil, ctx.Err()
		}
		if tctx.Err() != nil {
			p.stop(0)
			log.Error("ACP agent timed out; process group killed", "timeout_s", seconds, "step", step)
			return errorResult(timeoutText(name, seconds)), nil
		}
		p.stop(inv.shutdownGrace)
		log.Error("ACP agent invocation failed", "step", step, "err", err)
		return invocationError(name, mask(p.describe(step, err))), nil
	}

	if _, err := conn.Initialize(tctx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{
			Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
		},
		ClientInfo: &acp.Implementation{Name: "antler", Title: acp.Ptr("Antler"), Version: inv.version},
	}); err != nil {
		return failed("initialize", err)
	}
	req := acp.NewSessionRequest{Cwd: dir, McpServers: servers}
	if a.Model != nil && *a.Model != "" {
		req.Meta = map[string]any{"model": *a.Model}
	}
	sess, err := conn.NewSession(tctx, req)
	if err != nil {
		return failed("session/new", err)
	}

	// The prompt runs on a context of its own so that a cancelled call
	// can first ask the agent to stop (session/cancel) and only then
	// give up on it.
	pctx, pcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer pcancel()
	type outcome struct {
		resp acp.PromptResponse
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		resp, err := conn.Prompt(pctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}})
		done <- outcome{resp, err}
	}()

	var out outcome
	got := false
	select {
	case out = <-done:
		got = true
	case <-tctx.Done():
	}
	if !got {
		cancelled := ctx.Err() != nil
		if cancelled {
			// The caller gave up: ask the agent to stop and give it a
			// moment to answer the prompt (stopReason "cancelled").
			go func() { _ = conn.Cancel(context.Background(), acp.CancelNotification{SessionId: sess.SessionId}) }()
			grace := time.NewTimer(inv.cancelGrace)
			select {
			case out = <-done:
				got = true
				if out.err == nil {
					log.Info("ACP agent acknowledged cancellation", "stop_reason", out.resp.StopReason)
				}
			case <-grace.C:
			}
			grace.Stop()
		}
		pcancel()
		p.stop(0)
		if !got {
			<-done // returns once the connection is gone
		}
		if cancelled {
			return nil, ctx.Err()
		}
		log.Error("ACP agent timed out; process group killed", "timeout_s", seconds, "step", "session/prompt")
		return errorResult(timeoutText(name, seconds)), nil
	}
	if out.err != nil {
		pcancel()
		return failed("session/prompt", out.err)
	}
	// The turn is over. Closing stdin lets the agent exit; updates that
	// straggle in after the prompt response are still collected meanwhile.
	p.stop(inv.shutdownGrace)
	text := mask(cl.collected())
	log.Info("ACP agent finished", "stop_reason", out.resp.StopReason, "chars", len(text))
	if text == "" {
		return tool.Text(NoResponse), nil
	}
	return tool.Text(text), nil
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

// start spawns the agent in its own process group.
func (inv *Invoker) start(path string, a config.ACPAgent, dir string) (*process, error) {
	cmd := exec.Command(path, a.Args...)
	cmd.Dir = dir
	cmd.Env = childEnv(inv.environ(), a.Env)
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
