package sandbox

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/antlerhq/antler/tool"
)

//go:embed bash.md
var bashDoc string

const bashSchema = `{
  "type": "object",
  "properties": {
    "description": {"type": "string", "description": "Why you are running this command, in a few words. Always give this argument first."},
    "command": {"type": "string", "description": "The bash command to run. Use absolute paths for files and directories."}
  },
  "required": ["description", "command"]
}`

type bashArgs struct {
	Description string `json:"description"`
	Command     string `json:"command"`
}

// hostBashDisabledMessage is DeerFlow's text when host bash is off.
const hostBashDisabledMessage = "Host bash execution is disabled for LocalSandboxProvider because it is not a secure sandbox boundary. " +
	"Switch to AioSandboxProvider for isolated bash access, or set sandbox.allow_host_bash: true only in a fully trusted local environment."

// channelUserIDEnv carries the IM-channel user id (runtime context key
// channel_user_id) into commands.
const channelUserIDEnv = "DEERFLOW_CHANNEL_USER_ID"

// Bash returns the bash tool.
func (t *Tools) Bash() *tool.Tool { return newTool(NameBash, bashDoc, bashSchema, t.bash) }

func (t *Tools) bash(ctx context.Context, call *tool.Call, in bashArgs) (*tool.Result, error) {
	if !t.cfg.IsHostBashAllowed() {
		return tool.Errorf("%s", hostBashDisabledMessage), nil
	}
	sb, res, err := t.sandbox(ctx, call)
	if res != nil || err != nil {
		return res, err
	}
	if err := validateCommand(sb.layout, in.Command, nil); err != nil {
		return tool.Errorf("%s", err.Error()), nil
	}
	injected := map[string]string{}
	if t.injectEnv != nil {
		for k, v := range t.injectEnv(call) {
			if !validEnvKey(k) {
				t.logger.Warn("bash: injected environment variable with an invalid name dropped", "name", k)
				continue
			}
			injected[k] = v
		}
	}
	if id := call.ContextString("channel_user_id"); id != "" && len(id) <= 256 {
		injected[channelUserIDEnv] = id
	}
	command := sb.layout.ToHostText(sb.user, sb.thread, in.Command)
	timeout := time.Duration(t.cfg.Sandbox.BashCommandTimeout) * time.Second
	if timeout <= 0 {
		timeout = 600 * time.Second
	}
	r, err := runCommand(ctx, command, sb.paths.Workspace, sandboxEnv(t.environ(), injected), timeout, t.bashProgress(call))
	t.reportKill(r.killErr)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, err
		}
		return tool.Errorf("Unexpected error executing command: %s", redactSecrets(unexpected(sb, err), injected)), nil
	}
	out := r.stdout
	if r.stderr != "" {
		if out != "" {
			out += "\nStd Error:\n" + r.stderr
		} else {
			out = r.stderr
		}
	}
	if r.timedOut {
		notice := timeoutNotice(t.cfg.Sandbox.BashCommandTimeout)
		if out != "" {
			out += "\n" + notice
		} else {
			out = notice
		}
	} else if r.exitCode != 0 {
		out += "\nExit Code: " + strconv.Itoa(r.exitCode)
	}
	if out == "" {
		out = "(no output)"
	}
	out = redactSecrets(sb.Mask(out), injected)
	return tool.Text(truncateMiddle(out, t.cfg.Sandbox.BashOutputMaxChars, "middle truncated")), nil
}

// timeoutNotice is DeerFlow's text for a command killed at its timeout.
func timeoutNotice(seconds int) string {
	unit := "seconds"
	if seconds == 1 {
		unit = "second"
	}
	return fmt.Sprintf("Command timed out after %d %s and was terminated. To run a long-lived process such as a web server, "+
		"start it in the background and redirect its output, e.g. `your-command > /mnt/user-data/workspace/server.log 2>&1 &`.", seconds, unit)
}

// reportKill logs why a timed-out or cancelled command's descendants
// could not all be killed: once per Tools when this system cannot find
// them at all, every time otherwise.
func (t *Tools) reportKill(err error) {
	switch {
	case err == nil:
	case errors.Is(err, errNoProcScan):
		t.noProcScan.Do(func() {
			t.logger.Warn("bash: the descendants of a timed-out command that left its process group cannot be found here; only its process group is killed",
				"error", err)
		})
	default:
		t.logger.Warn("bash: not every process of a timed-out command could be killed", "error", err)
	}
}

// bashProgress reports a running command through the call's event sink:
// "running for 20s, 15 lines of output" every ToolsOptions.BashProgressEvery.
func (t *Tools) bashProgress(call *tool.Call) commandProgress {
	if call == nil || call.Emit == nil {
		return commandProgress{}
	}
	return commandProgress{every: t.progressEvery, report: func(elapsed time.Duration, lines int) {
		call.ReportProgress(tool.Progress{Progress: float64(lines),
			Message: fmt.Sprintf("running for %s, %d lines of output", elapsed.Round(time.Second), lines)})
	}}
}
