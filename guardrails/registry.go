package guardrails

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/antlerhq/antler/config"
)

// Env is what provider factories build with.
type Env struct {
	// Config is the loaded config.yaml (for its path and directory).
	Config *config.Config
	// Logger is never nil when the Registry calls a factory.
	Logger *slog.Logger
}

// Factory builds the provider guardrails.provider names. spec.Config holds
// its settings; an error is a configuration error (return a
// *config.Error to name the key yourself, as [Settings] does).
type Factory func(env Env, spec *config.GuardrailProvider) (Provider, error)

// Registry maps use strings to provider factories. It is a plain value:
// build one with NewRegistry or DefaultRegistry, register before use, and
// pass it to the program's wiring (antler.Options.Guardrails). It is not
// safe for concurrent registration.
type Registry struct {
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{factories: map[string]Factory{}} }

// DefaultRegistry returns a registry with Antler's providers:
// deerflow.guardrails.builtin:AllowlistProvider, antler:command and
// antler:http.
func DefaultRegistry() *Registry {
	r := NewRegistry()
	r.Register(allowlistFactory, config.AllowlistGuardrailUse)
	r.Register(commandFactory, CommandUse)
	r.Register(httpFactory, HTTPUse)
	return r
}

// Register maps each of uses to f; registering a use again replaces the
// earlier factory.
func (r *Registry) Register(f Factory, uses ...string) {
	for _, u := range uses {
		r.factories[u] = f
	}
}

// Uses returns the registered use strings, sorted.
func (r *Registry) Uses() []string { return slices.Sorted(maps.Keys(r.factories)) }

// Build returns the provider spec names. A use string no factory is
// registered for (a DeerFlow Python class path Antler does not have) is a
// *config.Error naming the file, the line and guardrails.provider.use.
func (r *Registry) Build(env Env, spec *config.GuardrailProvider) (Provider, error) {
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	file := configPath(env.Config)
	f, ok := r.factories[spec.Use]
	if !ok {
		return nil, &config.Error{File: file, Line: spec.UseLine, Key: "guardrails.provider.use",
			Msg: fmt.Sprintf("unknown guardrail provider %q: Antler cannot load Python classes (registered: %s; "+
				"use antler:command or antler:http for a provider of your own)", spec.Use, strings.Join(r.Uses(), ", "))}
	}
	p, err := f(env, spec)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, &config.Error{File: file, Line: spec.Line, Key: "guardrails.provider",
			Msg: fmt.Sprintf("cannot build guardrail provider %s: %v", spec.Use, err), Err: err}
	}
	if p == nil {
		return nil, &config.Error{File: file, Line: spec.UseLine, Key: "guardrails.provider.use",
			Msg: fmt.Sprintf("factory for %q returned no provider", spec.Use)}
	}
	return p, nil
}

func configPath(c *config.Config) string {
	if c == nil {
		return ""
	}
	return c.Path
}

func allowlistFactory(env Env, spec *config.GuardrailProvider) (Provider, error) {
	s := NewSettings(env, spec)
	allowed, _ := s.Strings("allowed_tools")
	denied, _ := s.Strings("denied_tools")
	if err := s.Done(); err != nil {
		return nil, err
	}
	return NewAllowlistProvider(allowed, denied), nil
}
