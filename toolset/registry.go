package toolset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/antlerhq/antler/community/browser"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/sandbox"
	"github.com/antlerhq/antler/tool"
)

// Env holds the services that factories build tools with. It is
// constructed by the program's wiring (the CLI or the gateway) and is
// immutable after construction.
type Env struct {
	// Config is the loaded config.yaml.
	Config *config.Config
	// Home is Antler's data directory (users, threads, agents, skills).
	Home string
	// Logger is never nil after NewEnv.
	Logger *slog.Logger
	// Sandbox provides the per-thread sandboxes of the file and shell
	// tools; nil means one local provider over Home, made on first use
	// and shared by every tool built with this Env.
	Sandbox sandbox.Provider
	// Browser keeps the browser tools' per-thread sessions; the program
	// owns it (closes it, and closes a thread's session when its run
	// ends). nil makes a config with a browser tool a build error.
	Browser *browser.Manager
}

// ToolFactory builds the tool a config entry names. Options of the entry
// (extra keys such as max_results) are in entry.Options. An error is a
// configuration error and fails the assembly.
type ToolFactory func(ctx context.Context, env *Env, entry config.ToolEntry) (*tool.Tool, error)

// ModelFactory builds the chat model a models[] entry names.
type ModelFactory func(ctx context.Context, env *Env, entry config.Model) (model.ChatModel, error)

// Registry maps use strings to factories. It is a plain value: build one
// with NewRegistry or DefaultRegistry and pass it to an Assembler. A
// Registry is not safe for concurrent registration; register everything
// before use.
type Registry struct {
	tools  map[string]ToolFactory
	models map[string]ModelFactory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{tools: map[string]ToolFactory{}, models: map[string]ModelFactory{}}
}

// RegisterTool maps each of uses to f. Registering a use twice replaces
// the earlier factory, so a program can override a built-in mapping.
func (r *Registry) RegisterTool(f ToolFactory, uses ...string) {
	for _, u := range uses {
		r.tools[u] = f
	}
}

// RegisterModel maps each of uses to f.
func (r *Registry) RegisterModel(f ModelFactory, uses ...string) {
	for _, u := range uses {
		r.models[u] = f
	}
}

// ToolUses returns the registered tool use strings, sorted.
func (r *Registry) ToolUses() []string { return sortedKeys(r.tools) }

// ModelUses returns the registered model use strings, sorted.
func (r *Registry) ModelUses() []string { return sortedKeys(r.models) }

// Tool returns the factory for use.
func (r *Registry) Tool(use string) (ToolFactory, bool) {
	f, ok := r.tools[use]
	return f, ok
}

// Model returns the factory for use.
func (r *Registry) Model(use string) (ModelFactory, bool) {
	f, ok := r.models[use]
	return f, ok
}

// BuildTool resolves a config entry through the registry. An unknown use
// is a *config.Error naming the string, the entry's line and the three
// nearest registered names.
func (r *Registry) BuildTool(ctx context.Context, env *Env, entry config.ToolEntry) (*tool.Tool, error) {
	key := fmt.Sprintf("tools[%d].use", entry.Index)
	f, ok := r.tools[entry.Use]
	if !ok {
		return nil, &config.Error{File: envFile(env), Line: entry.Line, Key: key,
			Msg: unknownUse(entry.Use, r.ToolUses())}
	}
	t, err := f(ctx, env, entry)
	if err != nil {
		if placed := placeOptionErrors(envFile(env), entry, err); placed != nil {
			return nil, placed
		}
		return nil, &config.Error{File: envFile(env), Line: entry.Line, Key: fmt.Sprintf("tools[%d]", entry.Index),
			Msg: fmt.Sprintf("cannot build tool %q (%s): %v", entry.Name, entry.Use, err), Err: err}
	}
	if t == nil {
		return nil, &config.Error{File: envFile(env), Line: entry.Line, Key: key,
			Msg: fmt.Sprintf("factory for %q returned no tool", entry.Use)}
	}
	return t, nil
}

// BuildModel resolves a models[] entry through the registry.
func (r *Registry) BuildModel(ctx context.Context, env *Env, entry config.Model, index int) (model.ChatModel, error) {
	f, ok := r.models[entry.Use]
	if !ok {
		return nil, &config.Error{File: envFile(env), Line: entry.Line, Key: fmt.Sprintf("models[%d].use", index),
			Msg: unknownUse(entry.Use, r.ModelUses())}
	}
	m, err := f(ctx, env, entry)
	if err != nil {
		return nil, &config.Error{File: envFile(env), Line: entry.Line, Key: fmt.Sprintf("models[%d]", index),
			Msg: fmt.Sprintf("cannot build model %q (%s): %v", entry.Name, entry.Use, err), Err: err}
	}
	return m, nil
}

func envFile(env *Env) string {
	if env == nil || env.Config == nil {
		return ""
	}
	return env.Config.Path
}

func unknownUse(use string, known []string) string {
	near := Nearest(use, known, 3)
	msg := fmt.Sprintf("unknown use %q", use)
	if len(near) > 0 {
		msg += " (nearest registered: " + strings.Join(near, ", ") + ")"
	}
	return msg
}

// Nearest returns up to n of candidates closest to s by edit distance
// (config.EditDistance, ignoring case), closest first, ties in name order.
func Nearest(s string, candidates []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	all := make([]scored, 0, len(candidates))
	for _, c := range candidates {
		all = append(all, scored{c, config.EditDistance(strings.ToLower(s), strings.ToLower(c))})
	}
	slices.SortFunc(all, func(a, b scored) int {
		return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.name, b.name))
	})
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].name)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// placeOptionErrors places the errors of a factory about single options
// (a *config.Error with a Key and no File or Line, as
// community.DecodeOptions returns them) at the key's line of the entry,
// under the key path tools[i].KEY. It returns nil when err holds any
// other error, which the caller reports for the whole entry.
func placeOptionErrors(file string, entry config.ToolEntry, err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	placed := make([]error, 0, len(errs))
	for _, e := range errs {
		ce, ok := e.(*config.Error)
		if !ok || ce.Key == "" || ce.File != "" || ce.Line != 0 {
			return nil
		}
		top, _, _ := strings.Cut(ce.Key, ".")
		line, ok := entry.KeyLines[top]
		if !ok {
			line = entry.Line
		}
		placed = append(placed, &config.Error{File: file, Line: line, Key: fmt.Sprintf("tools[%d].%s", entry.Index, ce.Key),
			Msg: ce.Msg + fmt.Sprintf(" (options of tool %q)", entry.Name), Err: ce.Err})
	}
	if len(placed) == 1 {
		return placed[0]
	}
	return errors.Join(placed...)
}
