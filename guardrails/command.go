package guardrails

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/antlerhq/antler/config"
)

// CommandUse is the use string of the command provider.
const CommandUse = "antler:command"

// Limits of the command and HTTP providers.
const (
	defaultProviderTimeout = 10 * time.Second
	maxProviderTimeout     = 10 * time.Minute
	// defaultMaxDecisionBytes bounds a decision document; maxDecisionBytes
	// is the most max_output_bytes / max_response_bytes may say.
	defaultMaxDecisionBytes = 64 << 10
	maxDecisionBytes        = 16 << 20
	maxStderrBytes          = 8 << 10
)

// CommandOptions configure a CommandProvider.
type CommandOptions struct {
	// Command is the argv; required. Command[0] is looked up in PATH, or
	// relative to Dir when it contains a slash.
	Command []string
	// Dir is the working directory ("" = the current one).
	Dir string
	// Env is added to the inherited environment.
	Env map[string]string
	// Timeout bounds one evaluation; zero means 10s. At
	// the timeout the command's whole process group is killed.
	Timeout time.Duration
	// MaxOutputBytes bounds stdout; zero means 64 KiB.
	MaxOutputBytes int
}

// CommandProvider runs a command per evaluation: the request as one JSON
// object on stdin, the decision as one JSON object on stdout. A non-zero
// exit, a crash, a timeout, more output than the bound or a document that
// is not a decision is an evaluation error (the guard fails closed or
// open).
type CommandProvider struct {
	opts CommandOptions // immutable after NewCommandProvider
}

// NewCommandProvider returns the provider; a missing command is an error.
func NewCommandProvider(opts CommandOptions) (*CommandProvider, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return nil, errors.New("command must be a non-empty list of strings")
	}
	opts.Command = slices.Clone(opts.Command)
	opts.Env = maps.Clone(opts.Env)
	if opts.Timeout <= 0 {
		opts.Timeout = defaultProviderTimeout
	}
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = defaultMaxDecisionBytes
	}
	return &CommandProvider{opts: opts}, nil
}

// Name implements Provider.
func (p *CommandProvider) Name() string { return "command" }

// Evaluate implements Provider.
func (p *CommandProvider) Evaluate(ctx context.Context, req *Request) (Decision, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Decision{}, err
	}
	runCtx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, p.opts.Command[0], p.opts.Command[1:]...)
	cmd.Dir = p.opts.Dir
	cmd.Env = os.Environ()
	for _, k := range slices.Sorted(maps.Keys(p.opts.Env)) {
		cmd.Env = append(cmd.Env, k+"="+p.opts.Env[k])
	}
	cmd.Stdin = bytes.NewReader(body)
	stdout, stderr := &capped{max: p.opts.MaxOutputBytes}, &capped{max: maxStderrBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Own process group, so that a timeout kills grandchildren too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return Decision{}, ctx.Err()
	case runCtx.Err() != nil:
		return Decision{}, fmt.Errorf("guardrail command %s timed out after %s", p.opts.Command[0], p.opts.Timeout)
	case stdout.overflow:
		return Decision{}, fmt.Errorf("guardrail command %s wrote more than %d bytes", p.opts.Command[0], p.opts.MaxOutputBytes)
	case err != nil:
		return Decision{}, fmt.Errorf("guardrail command %s failed: %v: %s", p.opts.Command[0], err, strings.TrimSpace(stderr.buf.String()))
	}
	d, err := parseDecision(bytes.TrimSpace(stdout.buf.Bytes()))
	if err != nil {
		return Decision{}, fmt.Errorf("guardrail command %s: %w", p.opts.Command[0], err)
	}
	return d, nil
}

// capped keeps at most max bytes and remembers an overflow.
type capped struct {
	buf      bytes.Buffer
	max      int
	overflow bool
}

func (c *capped) Write(b []byte) (int, error) {
	room := c.max - c.buf.Len()
	if len(b) > room {
		c.overflow = true
		c.buf.Write(b[:max(room, 0)])
		return len(b), nil
	}
	c.buf.Write(b)
	return len(b), nil
}

// commandFactory reads command, env, timeout and max_output_bytes.
func commandFactory(env Env, spec *config.GuardrailProvider) (Provider, error) {
	s := NewSettings(env, spec)
	argv, _ := s.Strings("command")
	opts := CommandOptions{
		Command:        argv,
		Env:            s.StringMap("env"),
		Timeout:        s.Seconds("timeout", defaultProviderTimeout, maxProviderTimeout),
		MaxOutputBytes: s.Bytes("max_output_bytes", defaultMaxDecisionBytes, maxDecisionBytes),
	}
	if env.Config != nil {
		opts.Dir = env.Config.Dir
	}
	if len(argv) == 0 {
		s.fail("command", "is required: the argv of the provider, e.g. [python3, policy.py]")
	}
	if err := s.Done(); err != nil {
		return nil, err
	}
	return NewCommandProvider(opts)
}
