package acptools

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/antlerhq/antler/tool"
)

// client is the Antler side of one agent connection: it collects the
// agent's message text, answers permission requests by policy and serves
// fs/* inside the workspace. The SDK calls SessionUpdate one notification
// at a time, and the other methods concurrently.
type client struct {
	agent       string
	autoApprove bool
	ws          *workspace
	logger      *slog.Logger
	// report, if set, passes the agent's progress on (acpProgress).
	report func(tool.Progress)

	mu     sync.Mutex
	text   strings.Builder // guarded by mu
	chunks int             // guarded by mu
}

var _ acp.Client = (*client)(nil)

// collected returns the agent_message_chunk text received so far.
func (c *client) collected() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.text.String()
}

// SessionUpdate keeps the text of agent_message_chunk updates; thoughts,
// tool calls, plans and the rest are only logged. The agent's tool calls
// and its answer's chunks are reported as progress.
func (c *client) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	u := n.Update
	if m := u.AgentMessageChunk; m != nil {
		if m.Content.Text != nil {
			c.mu.Lock()
			c.text.WriteString(m.Content.Text.Text)
			c.chunks++
			chunks := c.chunks
			c.mu.Unlock()
			c.progress(tool.Progress{Progress: float64(chunks), Message: "writing its answer"})
		}
		return nil
	}
	if tc := u.ToolCall; tc != nil {
		c.logger.Debug("ACP agent tool call", "agent", c.agent, "tool_call_id", tc.ToolCallId, "title", tc.Title)
		c.progress(tool.Progress{Message: "tool call: " + tc.Title})
	}
	return nil
}

func (c *client) progress(p tool.Progress) {
	if c.report != nil {
		c.report(p)
	}
}

// acpProgress reports an agent's progress through the call's event sink,
// its texts masked as the result is; nil when the call has no sink.
func acpProgress(call *tool.Call, mask func(string) string) func(tool.Progress) {
	if call == nil || call.Emit == nil {
		return nil
	}
	return func(p tool.Progress) {
		p.Message = mask(p.Message)
		call.ReportProgress(p)
	}
}

// RequestPermission answers with the first allow_once option, else the
// first allow_always option, when the agent is configured with
// auto_approve_permissions; otherwise, or when there is no such option,
// the request is cancelled, which agents treat as a denial.
func (c *client) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	if id, ok := pickPermission(p.Options, c.autoApprove); ok {
		c.logger.Info("ACP permission auto-approved", "agent", c.agent, "tool_call_id", p.ToolCall.ToolCallId, "session_id", p.SessionId, "option", id)
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
			Selected: &acp.RequestPermissionOutcomeSelected{OptionId: id},
		}}, nil
	}
	c.logger.Warn("ACP permission denied (set auto_approve_permissions: true in config.yaml to enable)",
		"agent", c.agent, "tool_call_id", p.ToolCall.ToolCallId, "session_id", p.SessionId)
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
		Cancelled: &acp.RequestPermissionOutcomeCancelled{},
	}}, nil
}

// pickPermission is the permission policy: with autoApprove, the first
// allow_once option, else the first allow_always option.
func pickPermission(options []acp.PermissionOption, autoApprove bool) (acp.PermissionOptionId, bool) {
	if !autoApprove {
		return "", false
	}
	for _, kind := range []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindAllowAlways} {
		for _, o := range options {
			if o.Kind == kind && o.OptionId != "" {
				return o.OptionId, true
			}
		}
	}
	return "", false
}

// ReadTextFile serves fs/read_text_file inside the workspace.
func (c *client) ReadTextFile(_ context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	text, err := c.ws.read(p.Path, p.Line, p.Limit)
	if err != nil {
		c.logger.Warn("ACP agent read refused", "agent", c.agent, "path", p.Path, "err", err)
		return acp.ReadTextFileResponse{}, err
	}
	return acp.ReadTextFileResponse{Content: text}, nil
}

// WriteTextFile serves fs/write_text_file inside the workspace.
func (c *client) WriteTextFile(_ context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	if err := c.ws.write(p.Path, p.Content); err != nil {
		c.logger.Warn("ACP agent write refused", "agent", c.agent, "path", p.Path, "err", err)
		return acp.WriteTextFileResponse{}, err
	}
	return acp.WriteTextFileResponse{}, nil
}

// The terminal methods are not offered (the terminal capability is not
// advertised); agents run their own commands.

func (c *client) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (c *client) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (c *client) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (c *client) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (c *client) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}
