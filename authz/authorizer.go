package authz

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/antlerhq/antler/config"
)

// Options configure an Authorizer. The zero value is authorization off.
type Options struct {
	// Config is the authorization section.
	Config config.Authorization
	// ConfigFile names config.yaml in errors ("" for none).
	ConfigFile string
	// Providers are the embedder's providers by use string; a use string
	// that is neither RBAC's nor here is a config error.
	Providers map[string]Factory
	// Logger receives provider failures; nil discards.
	Logger *slog.Logger
}

// Authorizer applies one provider with the section's fail_closed and
// default_role. A disabled Authorizer allows everything. It is immutable
// and safe for concurrent use; build it once per process with New.
type Authorizer struct {
	provider    Provider // nil: authorization off
	failClosed  bool
	defaultRole string
	logger      *slog.Logger
}

// New builds the configured provider. A use string Antler does not know
// (such as a Python class path other than DeerFlow's RBAC) and a provider
// config the provider rejects are *config.Error values naming
// authorization.provider; so is a default_role the RBAC roles do not
// define.
func New(opts Options) (*Authorizer, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := opts.Config
	a := &Authorizer{failClosed: c.FailClosed, defaultRole: c.DefaultRole, logger: logger}
	if a.defaultRole == "" {
		a.defaultRole = config.DefaultRole
	}
	if !c.Enabled {
		return a, nil
	}
	if c.Provider == nil {
		return nil, &config.Error{File: opts.ConfigFile, Key: "authorization.provider",
			Msg: "authorization.enabled is true but no provider is configured; set authorization.provider.use to a class path"}
	}
	use := c.Provider.Use
	var (
		p   Provider
		err error
	)
	if f, ok := opts.Providers[use]; ok {
		p, err = f(c.Provider.Config)
	} else if use == config.RBACAuthorizationUse {
		p, err = rbacProvider(c.Provider.Config)
	} else {
		known := append([]string{config.RBACAuthorizationUse}, slices.Sorted(maps.Keys(opts.Providers))...)
		return nil, &config.Error{File: opts.ConfigFile, Line: c.Provider.UseLine, Key: "authorization.provider.use",
			Msg: fmt.Sprintf("Failed to resolve authorization provider class '%s': Antler cannot load Python classes; known providers: %s",
				use, strings.Join(known, ", "))}
	}
	if err == nil && p == nil {
		err = fmt.Errorf("the factory returned no provider")
	}
	if err != nil {
		return nil, &config.Error{File: opts.ConfigFile, Line: c.Provider.Line, Key: "authorization.provider.config",
			Msg: fmt.Sprintf("Failed to construct authorization provider '%s': %v", use, err), Err: err}
	}
	if r, ok := p.(*RBAC); ok {
		if err := r.enforcedOnly(); err != nil {
			return nil, &config.Error{File: opts.ConfigFile, Line: c.Provider.Line, Key: "authorization.provider.config.roles", Msg: err.Error()}
		}
		if err := r.ValidateRole(a.defaultRole, "authorization.default_role"); err != nil {
			return nil, &config.Error{File: opts.ConfigFile, Key: "authorization.default_role",
				Msg: fmt.Sprintf("Invalid authorization default_role for provider '%s': %v", use, err), Err: err}
		}
	}
	a.provider = p
	return a, nil
}

// rbacProvider returns NewRBAC as a Provider (a nil *RBAC must not become
// a non-nil interface).
func rbacProvider(cfg map[string]any) (Provider, error) {
	r, err := NewRBAC(cfg)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Enabled reports whether authorization is on.
func (a *Authorizer) Enabled() bool { return a != nil && a.provider != nil }

// DefaultRole is the role of a caller without one.
func (a *Authorizer) DefaultRole() string {
	if a == nil || a.defaultRole == "" {
		return config.DefaultRole
	}
	return a.defaultRole
}

// FailClosed reports the section's fail_closed.
func (a *Authorizer) FailClosed() bool { return a != nil && a.failClosed }

// Provider is the configured provider (nil when off).
func (a *Authorizer) Provider() Provider {
	if a == nil {
		return nil
	}
	return a.provider
}

// ValidateRole checks, for the RBAC provider, that a configured role (a
// gateway token's) is defined; other providers decide at request time.
// field names the setting in the error.
func (a *Authorizer) ValidateRole(role, field string) error {
	if r, ok := a.Provider().(*RBAC); ok {
		return r.ValidateRole(role, field)
	}
	return nil
}

// Principal is the principal of a runtime context, with the default role.
func (a *Authorizer) Principal(rc map[string]any) (Principal, error) {
	return principalFromContext(rc, a.DefaultRole())
}

// Visible returns the candidates of resourceType the principal may see,
// in the candidates' order (DeerFlow's filter_tools_by_authorization). Off,
// it returns them all. When the provider fails, it returns none if
// fail_closed, else all; names the provider adds are dropped.
func (a *Authorizer) Visible(ctx context.Context, p Principal, resourceType string, candidates []string) []string {
	if !a.Enabled() {
		return slices.Clone(candidates)
	}
	allowed, err := a.provider.FilterResources(ctx, p, resourceType, slices.Clone(candidates))
	if err != nil {
		a.logger.Error("Authorization provider failed while filtering "+resourceType+"s", "provider", a.provider.Name(),
			"role", p.Role, "err", err, "fail_closed", a.failClosed)
		if a.failClosed {
			return []string{}
		}
		return slices.Clone(candidates)
	}
	keep := make(map[string]bool, len(allowed))
	for _, n := range allowed {
		keep[n] = true
	}
	out := make([]string, 0, len(candidates))
	for _, c := range candidates {
		if keep[c] {
			out = append(out, c)
		}
	}
	return out
}

// Authorize asks the provider and applies fail_closed to its failure:
// denied with the reason oap.evaluator_error when fail_closed, else
// allowed with that reason. Off, everything is allowed.
func (a *Authorizer) Authorize(ctx context.Context, req Request) Decision {
	if !a.Enabled() {
		return Decision{Allow: true}
	}
	d, err := a.provider.Authorize(ctx, req)
	if err == nil {
		return d
	}
	a.logger.Error("Authorization provider failed", "provider", a.provider.Name(), "resource", req.Resource,
		"target", req.Target, "role", req.Principal.Role, "err", err, "fail_closed", a.failClosed)
	if a.failClosed {
		return Decision{Reasons: []Reason{{Code: "oap.evaluator_error", Message: "guardrail provider error (fail-closed)"}}}
	}
	return Decision{Allow: true, Reasons: []Reason{{Code: "oap.evaluator_error", Message: "guardrail provider error (fail-open)"}}}
}
