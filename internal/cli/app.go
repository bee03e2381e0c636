package cli

import (
	"context"
	"errors"
	"fmt"
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
	// dotenv is what the .env beside config.yaml supplied (names only).
	dotenv config.DotEnv
	env    *toolset.Env
	// assembler and services are built by wire.
	assembler *toolset.Assembler
	services
	closers []func() error
}

// newApp loads the .env file beside config.yaml into the process
// environment (variables already set win), then the configuration named by
// the global flags, and wires the services. A configuration problem is a
// *config.Error (exit 2). The config's warnings are logged, except for
// doctor, which lists them (globals.listWarnings).
func newApp(ctx context.Context, g *globals) (*app, error) {
	logger, err := newLogger(g.opts.Stderr, g.logLevel, g.logFormat, g.server, g.opts.Getenv)
	if err != nil {
		return nil, err
	}
	paths, err := config.ResolvePaths(g.config, g.extensions, g.home, g.opts.Getenv)
	if err != nil {
		return nil, err
	}
	dotenv, err := config.ApplyDotEnv(filepath.Dir(paths.Config), os.LookupEnv, os.Setenv)
	if err != nil {
		return nil, err
	}
	if len(dotenv.Set) > 0 {
		// The .env file may name the home or the extensions file.
		if paths, err = config.ResolvePaths(paths.Config, g.extensions, g.home, g.opts.Getenv); err != nil {
			return nil, err
		}
	}
	cfg, err := loadConfig(paths.Config)
	if err != nil {
		return nil, err
	}
	cfg.Warnings = append(cfg.Warnings, cfg.UnknownModelKeys(paths.Config, toolset.ModelOptionKeys(), toolset.ModelSendsUnknownKeys)...)
	if !g.listWarnings {
		for _, w := range cfg.Warnings {
			logger.Warn(w)
		}
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
		dotenv: dotenv,
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

// checkModelFlag refuses a --model that names no models[] entry (exit 2),
// listing the configured names, where the agent factory would fall back to
// the default model as DeerFlow does. "" (no flag) is fine.
func (a *app) checkModelFlag(name string) error {
	if name == "" {
		return nil
	}
	if _, ok := a.cfg.Model(name); ok {
		return nil
	}
	names := make([]string, len(a.cfg.Models))
	for i, m := range a.cfg.Models {
		names[i] = m.Name
	}
	msg := fmt.Sprintf("--model: no model named %q in %s", name, a.paths.Config)
	if near, ok := config.NearestKey(name, names); ok {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	if len(names) == 0 {
		return usageErrorf("%s: models is empty", msg)
	}
	return usageErrorf("%s; configured: %s", msg, strings.Join(names, ", "))
}

// brokenTools warns about each config tool the assembler asm left out
// because it does not build, and returns the error of the one named name
// (nil if name is not among them), for `tools call` of that very tool.
func (a *app) brokenTools(asm *toolset.Assembler, name string) error {
	var named error
	for _, b := range asm.BrokenTools() {
		a.logger.Warn(fmt.Sprintf("tool %s left out: %s", b.Name, oneLine(b.Err)))
		if b.Name == name {
			named = b.Err
		}
	}
	return named
}

// brokenToolsError joins the errors of the config tools the assembler asm
// left out (nil if none), for tools list, which lists the others and then
// exits 2.
func (a *app) brokenToolsError(asm *toolset.Assembler) error {
	var errs []error
	for _, b := range asm.BrokenTools() {
		errs = append(errs, fmt.Errorf("tool %s left out: %w", b.Name, b.Err))
	}
	return errors.Join(errs...)
}
