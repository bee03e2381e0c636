package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/toolset"
)

// app is what a command needs at run time: the loaded configuration and
// the services built from it. Commands build one with newApp and Close it.
type app struct {
	g      *globals
	stdout io.Writer
	stderr io.Writer
	logger *slog.Logger
	paths  config.Paths
	cfg    *config.Config
	env    *toolset.Env
	// assembler and services are built by wire.
	assembler *toolset.Assembler
	services
	closers []func() error
}

// newApp loads the configuration named by the global flags and wires the
// services. A configuration problem is a *config.Error (exit 2).
func newApp(ctx context.Context, g *globals) (*app, error) {
	logger, err := newLogger(g.opts.Stderr, g.logLevel)
	if err != nil {
		return nil, err
	}
	paths, err := config.ResolvePaths(g.config, g.extensions, g.home, g.opts.Getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(paths.Config)
	if err != nil {
		return nil, err
	}
	if err := validateID("user", g.user); err != nil {
		return nil, err
	}
	a := &app{
		g:      g,
		stdout: g.opts.Stdout,
		stderr: g.opts.Stderr,
		logger: logger,
		paths:  paths,
		cfg:    cfg,
	}
	if err := a.wire(ctx); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// loadConfig loads config.yaml; a missing file at the default location is
// a configuration error that says what to do.
func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return nil, &config.Error{Msg: "no config.yaml found: pass --config, set ANTLER_CONFIG, or run from a folder with a config.yaml"}
	}
	cfg, err := config.Load(path)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil, &config.Error{File: path, Msg: "file not found"}
		}
		return nil, &config.Error{File: path, Msg: err.Error(), Err: err}
	}
	return cfg, nil
}

// Close releases the app's services in reverse order.
func (a *app) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}

func (a *app) onClose(f func() error) { a.closers = append(a.closers, f) }

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErrorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// validateID checks a user or thread id given on the command line.
func validateID(what, id string) error {
	if id == "" || len(id) > 128 || strings.Trim(id, ".") == "" || strings.ContainsAny(id, `/\`+"\x00") {
		return usageErrorf("--%s: %q is not a valid %s id (letters, digits, '-', '_', '.'; at most 128)", what, id, what)
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return usageErrorf("--%s: %q is not a valid %s id (letters, digits, '-', '_', '.'; at most 128)", what, id, what)
		}
	}
	return nil
}

// homeDir returns the absolute data directory.
func (a *app) homeDir() string {
	h := a.paths.Home
	if abs, err := filepath.Abs(h); err == nil {
		h = abs
	}
	return h
}
