package commandtool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/tool"
)

// Defaults for Options' zero values.
const (
	defaultTimeout        = 60 * time.Second
	defaultMaxOutputBytes = 1 << 20
)

// Options configure a command tool.
type Options struct {
	// Name is the tool name the model calls. Required.
	Name string
	// Description is the model-facing description; "" means a generic
	// text naming the command.
	Description string
	// Command is the argv to run. Required; Command[0] is looked up in
	// PATH, or relative to Dir when it contains a slash.
	Command []string
	// InputSchema is the JSON Schema of the arguments; nil accepts any
	// object.
	InputSchema json.RawMessage
	// Timeout bounds one call; zero means 60s. At the timeout
	// the command's whole process group is killed.
	Timeout time.Duration
	// Env is added to the inherited environment.
	Env map[string]string
	// Dir is the working directory ("" = the current one).
	Dir string
	// MaxOutputBytes caps stdout; zero means 1 MiB.
	MaxOutputBytes int
}

// New returns the tool. It returns an error for a missing name or command
// or an invalid input schema.
func New(opts Options) (*tool.Tool, error) {
	if opts.Name == "" {
		return nil, errors.New("command tool: name is required")
	}
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return nil, errors.New("command tool: command must be a non-empty list of strings")
	}
	schema := opts.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","additionalProperties":true}`)
	}
	v, err := tool.NewValidator(schema)
	if err != nil {
		return nil, fmt.Errorf("command tool %s: input_schema: %w", opts.Name, err)
	}
	desc := opts.Description
	if desc == "" {
		desc = fmt.Sprintf("Runs the command %s with the arguments as JSON on its standard input.", filepath.Base(opts.Command[0]))
	}
	r := &runner{opts: opts, validator: v}
	r.opts.Command = slices.Clone(opts.Command)
	r.opts.Env = maps.Clone(opts.Env)
	r.opts.Timeout = cmpDuration(opts.Timeout, defaultTimeout)
	if r.opts.MaxOutputBytes <= 0 {
		r.opts.MaxOutputBytes = defaultMaxOutputBytes
	}
	return &tool.Tool{Name: opts.Name, Description: desc, InputSchema: schema, Handler: r.call}, nil
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

type runner struct {
	opts      Options // immutable after New
	validator *tool.Validator
}

func (r *runner) call(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
	if err := r.validator.Validate(args); err != nil {
		return tool.Errorf("invalid arguments for %s: %v", r.opts.Name, err), nil
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	runCtx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()

	cmd := exec.CommandContext(runCtx, r.opts.Command[0], r.opts.Command[1:]...)
	cmd.Dir = r.opts.Dir
	cmd.Env = r.env(ctx, call)
	cmd.Stdin = bytes.NewReader(args)
	stdout := &capped{max: r.opts.MaxOutputBytes}
	stderr := &capped{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Own process group, so that a timeout kills grandchildren too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second

	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if runCtx.Err() != nil {
		return tool.Errorf("command tool %s timed out after %s", r.opts.Name, r.opts.Timeout), nil
	}
	if stdout.overflow {
		return tool.Errorf("command tool %s wrote more than %d bytes of output", r.opts.Name, r.opts.MaxOutputBytes), nil
	}
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			msg := strings.TrimSpace(stderr.buf.String())
			if msg == "" {
				msg = strings.TrimSpace(stdout.buf.String())
			}
			return tool.Errorf("command tool %s exited with status %d: %s", r.opts.Name, exitErr.ExitCode(), tail(msg, 2000)), nil
		}
		return tool.Errorf("command tool %s could not run %s: %v", r.opts.Name, r.opts.Command[0], err), nil
	}
	call.Log().Debug("command tool finished", "tool", r.opts.Name, "duration", time.Since(start))
	return parseOutput(r.opts.Name, stdout.buf.Bytes()), nil
}

func (r *runner) env(ctx context.Context, call *tool.Call) []string {
	env := os.Environ()
	for _, k := range slices.Sorted(maps.Keys(r.opts.Env)) {
		env = append(env, k+"="+r.opts.Env[k])
	}
	if call != nil {
		env = append(env, "ANTLER_THREAD_ID="+call.ThreadID, "ANTLER_USER_ID="+call.UserID, "ANTLER_TOOL_CALL_ID="+call.ID)
	}
	// The trace context of the tool call's span, so that a command that
	// speaks OpenTelemetry continues the run's trace.
	return telemetry.InjectEnv(ctx, env)
}

// output is the JSON form a command may print.
type output struct {
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"is_error"`
}

// parseOutput turns stdout into a result: a JSON object with a "content"
// key is structured output; anything else is plain text.
func parseOutput(name string, data []byte) *tool.Result {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return tool.Text(string(data))
	}
	var out output
	if err := json.Unmarshal(trimmed, &out); err != nil || out.Content == nil {
		if err != nil && !json.Valid(trimmed) {
			return tool.Errorf("command tool %s printed invalid JSON: %v", name, err)
		}
		return tool.Text(string(data))
	}
	var res *tool.Result
	var text string
	var blocks []tool.Block
	switch {
	case json.Unmarshal(out.Content, &text) == nil:
		res = tool.Text(text)
	case json.Unmarshal(out.Content, &blocks) == nil && validBlocks(blocks):
		res = &tool.Result{Content: blocks}
	default:
		return tool.Errorf("command tool %s printed a content that is neither a string nor a list of blocks", name)
	}
	if out.IsError {
		res.IsError = true
		if len(res.Content) > 0 && res.Content[0].Type == tool.BlockText && !strings.HasPrefix(res.Content[0].Text, "Error:") {
			res.Content[0].Text = "Error: " + res.Content[0].Text
		}
	}
	return res
}

func validBlocks(blocks []tool.Block) bool {
	for _, b := range blocks {
		switch b.Type {
		case tool.BlockText, tool.BlockImage, tool.BlockJSON:
		default:
			return false
		}
	}
	return true
}

// tail keeps about the last n bytes of s, starting on a character
// boundary so that the text stays valid UTF-8.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	start := len(s) - n
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return "..." + s[start:]
}

// capped is a writer that keeps at most max bytes and remembers overflow.
type capped struct {
	buf      bytes.Buffer
	max      int
	overflow bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if len(p) > room {
		c.overflow = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

var _ io.Writer = (*capped)(nil)
