package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/guardrails"
	"github.com/antlerhq/antler/toolset"
)

// Version is Antler's version.
const Version = "0.1.0-dev"

// Options configure Main. The zero value runs the standard antler binary.
type Options struct {
	// Registry resolves use strings; nil means toolset.DefaultRegistry().
	// Programs that embed Antler pass a registry with their own tools.
	Registry *toolset.Registry
	// Stdin, Stdout and Stderr default to the process's.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv defaults to os.Getenv.
	Getenv func(string) string
	// Guardrails resolves guardrails.provider.use; nil means
	// guardrails.DefaultRegistry(). Programs that embed Antler pass a
	// registry with their own providers.
	Guardrails *guardrails.Registry
	// AuthorizationProviders are the program's own authorization
	// providers by use string (authorization.provider.use); nil means
	// only DeerFlow's RBAC provider.
	AuthorizationProviders map[string]authz.Factory
}

func (c Options) withDefaults() *Options {
	if c.Registry == nil {
		c.Registry = toolset.DefaultRegistry()
	}
	if c.Guardrails == nil {
		c.Guardrails = guardrails.DefaultRegistry()
	}
	if c.Stdin == nil {
		c.Stdin = os.Stdin
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	// The log, the renderer's tool lines and the live line write stderr
	// from several goroutines (a tool's call logs while the loop renders):
	// one lock orders them, whatever writer the caller passed.
	c.Stdout, c.Stderr = &lockedWriter{w: c.Stdout}, &lockedWriter{w: c.Stderr}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	return &c
}

// globals are the flags every command shares (README.md, "Using it").
type globals struct {
	opts       *Options
	config     string
	extensions string
	home       string
	user       string
	logLevel   string
	// logFormat is --log-format: auto, text or json (newLogger).
	logFormat string
	// server is set by serve, whose log is for machines: auto means text.
	server bool
	// listWarnings is set by doctor, which lists the config's warnings
	// itself instead of newApp logging them.
	listWarnings bool
	// skipBrokenTools is set by the tools commands, which need only some
	// tools: a config tool that fails to build is left out and reported
	// (toolset.Assembler.SkipBrokenTools) instead of failing the command.
	skipBrokenTools bool
	// telemetry is set by serve, run and chat, which start the telemetry
	// provider (wire_telemetry.go); the other commands export nothing.
	telemetry bool
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is an error that exits 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// Main runs the antler command line with args (without the program name)
// and returns the process exit code.
func Main(ctx context.Context, args []string, o Options) int {
	opts := o.withDefaults()
	root := newRoot(opts)
	root.SetArgs(args)
	root.SetIn(opts.Stdin)
	root.SetOut(opts.Stdout)
	root.SetErr(opts.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := exitCode(err)
	fmt.Fprintln(opts.Stderr, "antler: "+errorLine(err))
	return code
}

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		return 2
	}
	msg := err.Error()
	// cobra's own usage errors.
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "accepts ", "requires "} {
		if strings.HasPrefix(msg, p) {
			return 2
		}
	}
	return 1
}

func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
}

func newRoot(opts *Options) *cobra.Command {
	g := &globals{opts: opts}
	root := &cobra.Command{
		Use:           "antler",
		Short:         "Antler: an agent tool harness compatible with DeerFlow's configuration",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	f := root.PersistentFlags()
	f.StringVar(&g.config, "config", "", "config.yaml path (env ANTLER_CONFIG, DEER_FLOW_CONFIG_PATH; default ./config.yaml)")
	f.StringVar(&g.extensions, "extensions", "", "extensions_config.json path (env ANTLER_EXTENSIONS_CONFIG, DEER_FLOW_EXTENSIONS_CONFIG_PATH; default beside the config)")
	f.StringVar(&g.home, "home", "", "data directory for users, threads, agents and skills (env ANTLER_HOME; default ./.antler)")
	f.StringVar(&g.user, "user", "default", "user id")
	f.StringVar(&g.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	f.StringVar(&g.logFormat, "log-format", logFormatAuto, "log format: auto (plain warnings on a terminal, else text), text or json (slog lines)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &exitError{code: 2, err: err} })

	// One line per command; each lives in its own file.
	root.AddCommand(
		newToolsCmd(g),
		newVersionCmd(g),
		newDoctorCmd(g),
		newRunCmd(g),
		newChatCmd(g),
		newServeCmd(g),
		newMCPCmd(g),
		newMemoryCmd(g),
		newSkillsCmd(g),
		newCompletionCmd(),
	)
	return root
}

// lockedWriter serialises the writes of several goroutines to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// fileOf returns the file behind w (through a lockedWriter), for terminal
// checks.
func fileOf(w io.Writer) (*os.File, bool) {
	if l, ok := w.(*lockedWriter); ok {
		w = l.w
	}
	f, ok := w.(*os.File)
	return f, ok
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
