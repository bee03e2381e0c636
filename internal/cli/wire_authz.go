package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/config"
)

// wireAuthz builds the authorizer of the authorization section, with the
// program's own providers, and checks that every role gateway.tokens
// names is one the RBAC roles define: an unknown role is a config error
// at start, not a run that fails closed later.
func (a *app) wireAuthz() error {
	az, err := authz.New(authz.Options{Config: a.cfg.Authorization, ConfigFile: a.cfg.Path,
		Providers: a.g.opts.AuthorizationProviders, Logger: a.logger})
	if err != nil {
		return err
	}
	for i, t := range a.cfg.Gateway.Tokens {
		key := fmt.Sprintf("gateway.tokens[%d].role", i)
		if err := az.ValidateRole(t.EffectiveRole(a.cfg.Authorization.DefaultRole), key); err != nil {
			return &config.Error{File: a.cfg.Path, Key: key, Msg: err.Error(), Err: err}
		}
	}
	a.authz = az
	return nil
}

// userRole is the role of the CLI's --user: its gateway.tokens entry's,
// else authorization.default_role.
func (a *app) userRole() string {
	role, _ := a.cfg.UserRole(a.g.user)
	return role
}

// modelDenied makes a --model the user's role may not use a usage error
// (exit 2); other errors are returned as they are.
func modelDenied(err error) error {
	var md *authz.ModelDeniedError
	if errors.As(err, &md) {
		return &exitError{code: 2, err: fmt.Errorf("--model: %w", err)}
	}
	return err
}

// checkAuthorization reports the authorization section for doctor: off,
// or on with its provider, and the role of the --user.
func (r *doctorReport) checkAuthorization(a *app) {
	start := time.Now()
	detail := a.cfg.Authorization.String()
	if a.authz.Enabled() {
		detail += fmt.Sprintf("; --user %s has role %s", a.g.user, a.userRole())
	}
	r.add("authorization", "-", "ok", detail, start)
}
