package config

import (
	"fmt"
	"strings"
)

// RBACAuthorizationUse is the use string of DeerFlow's built-in role-based
// authorization provider (package authz).
const RBACAuthorizationUse = "deerflow.authz.rbac:RbacAuthorizationProvider"

// AdminRole is the role of a gateway token entry with admin: true, and of
// the one user of a gateway without tokens (DeerFlow's system_role
// "admin").
const AdminRole = "admin"

// DefaultRole is authorization.default_role's default.
const DefaultRole = "user"

// Authorization is the authorization section: DeerFlow's fine-grained,
// role-based authorization (package authz). When Enabled, the provider
// decides which tools a role's agent binds and may call, which models it
// may use and which gateway routes it may reach.
//
//	authorization:
//	  enabled: true
//	  fail_closed: true
//	  default_role: user
//	  provider:
//	    use: deerflow.authz.rbac:RbacAuthorizationProvider
//	    config:
//	      roles:
//	        user:  {tools: {allow: "*", deny: [bash]}}
//	        admin: {tools: {allow: "*"}}
type Authorization struct {
	// Enabled turns authorization on (default false: every user may use
	// every tool, model and route). Enabled without a provider is a load
	// error, as in DeerFlow.
	Enabled bool `yaml:"enabled"`
	// FailClosed denies when the provider fails or the identity cannot be
	// resolved (an unknown role); false allows with a warning. Default
	// true.
	FailClosed bool `yaml:"fail_closed"`
	// DefaultRole is the role of a caller without one: a CLI user without
	// a gateway token entry. Default "user". It is set as the runtime
	// context's user_role even when authorization is off, for guardrails.
	DefaultRole string `yaml:"default_role"`
	// Provider names the provider (default null).
	Provider *AuthorizationProvider `yaml:"provider"`
}

// AuthorizationProvider is authorization.provider.
type AuthorizationProvider struct {
	// Use names the provider: RBACAuthorizationUse, or a use string an
	// embedding program passes a Go provider for. Required.
	Use string `yaml:"use"`
	// Config holds the provider's settings (DeerFlow's constructor keyword
	// arguments; the RBAC provider takes roles), "$VAR" values resolved.
	Config map[string]any `yaml:"config"`
	// Line is the line of the provider key, UseLine that of its use key,
	// for errors.
	Line    int `yaml:"-"`
	UseLine int `yaml:"-"`
}

func defaultAuthorization() Authorization {
	return Authorization{FailClosed: true, DefaultRole: DefaultRole}
}

// validateAuthorization records the provider's lines, rejects an enabled
// section without a provider or use string and an empty default_role,
// and checks the roles of gateway.tokens.
func (p *parser) validateAuthorization() {
	a := &p.cfg.Authorization
	if strings.TrimSpace(a.DefaultRole) == "" {
		p.invalid("authorization.default_role", "must be a non-empty role name")
	}
	if a.Provider != nil {
		a.Provider.Line = p.line("authorization.provider")
		a.Provider.UseLine = p.line("authorization.provider.use")
	}
	if a.Enabled {
		switch {
		case a.Provider == nil:
			p.errorf(p.line("authorization.enabled"), "authorization.provider",
				"authorization.enabled is true but no provider is configured; set authorization.provider.use to a class path (for example %s)",
				RBACAuthorizationUse)
		case strings.TrimSpace(a.Provider.Use) == "":
			p.invalid("authorization.provider.use", "is required (for example %s)", RBACAuthorizationUse)
		}
	}
	p.validateTokenRoles()
}

// validateTokenRoles refuses gateway.tokens entries whose role
// contradicts admin (admin: true with a role other than "admin"), and a
// user given two different roles by two entries.
func (p *parser) validateTokenRoles() {
	roles := map[string]string{}
	for i, t := range p.cfg.Gateway.Tokens {
		at := indexKey("gateway.tokens", i)
		if t.Admin && t.Role != "" && t.Role != AdminRole {
			p.invalid(joinKey(at, "role"), "role %q contradicts admin: true (an admin's role is %q); drop one of them", t.Role, AdminRole)
			continue
		}
		role := t.EffectiveRole(p.cfg.Authorization.DefaultRole)
		if prev, ok := roles[t.UserID]; ok && prev != role {
			p.invalid(joinKey(at, "role"), "user %q already has role %q from an earlier entry; one user has one role", t.UserID, prev)
			continue
		}
		roles[t.UserID] = role
	}
}

// EffectiveRole is the entry's role: Role if set, else "admin" for an
// admin entry, else defaultRole.
func (t GatewayToken) EffectiveRole(defaultRole string) string {
	switch {
	case t.Role != "":
		return t.Role
	case t.Admin:
		return AdminRole
	}
	return defaultRole
}

// IsAdmin reports whether the entry may manage process-wide settings:
// admin: true, or role "admin".
func (t GatewayToken) IsAdmin() bool { return t.Admin || t.Role == AdminRole }

// UserRole returns the role gateway.tokens gives userID, and whether an
// entry names that user. The CLI's --user takes it; a user without an
// entry has authorization.default_role.
func (c *Config) UserRole(userID string) (string, bool) {
	for _, t := range c.Gateway.Tokens {
		if t.UserID == userID {
			return t.EffectiveRole(c.Authorization.DefaultRole), true
		}
	}
	return c.Authorization.DefaultRole, false
}

// String describes the section in one line, for doctor.
func (a Authorization) String() string {
	if !a.Enabled {
		return "off"
	}
	use := ""
	if a.Provider != nil {
		use = a.Provider.Use
	}
	return fmt.Sprintf("on (provider %s, default_role %s, fail_closed %t)", use, a.DefaultRole, a.FailClosed)
}
