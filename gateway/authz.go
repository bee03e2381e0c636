package gateway

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/config"
)

// This file applies the authorization section to the gateway (DeerFlow's
// app/gateway/authz.py and its models router): route permissions, the
// caller's identity in a run's runtime context, and model permissions.

// identityKeys are the runtime context keys that say who the caller is;
// a client's values for them are dropped, the token's role is set.
func identityKeys() []string {
	return []string{authz.ContextUserID, authz.ContextUserRole, authz.ContextOAuthProvider, authz.ContextOAuthID,
		authz.ContextChannelUserID, authz.ContextIsInternal, authz.ContextAuthzAttributes}
}

// trustedContext removes the client's identity keys from a run's context
// and sets the caller's user id and role.
func trustedContext(rc map[string]any, u *principal) {
	for _, k := range identityKeys() {
		delete(rc, k)
	}
	rc[authz.ContextUserID], rc[authz.ContextUserRole] = u.ID, u.Role
}

// authzPrincipal is the authorization principal of the caller.
func (s *Server) authzPrincipal(u *principal) authz.Principal {
	p, _ := s.authz.Principal(map[string]any{authz.ContextUserID: u.ID, authz.ContextUserRole: u.Role})
	return p
}

// perm wraps a route that needs a route permission ("threads:read"): a
// caller without it gets DeerFlow's 403 {"detail": "Permission denied:
// threads:read"}. With authorization off every caller holds every
// permission.
func (s *Server) perm(permission string, h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, u *principal) {
		if !s.authz.AllowRoute(r.Context(), s.authzPrincipal(u), permission) {
			writeError(w, http.StatusForbidden, "%s", authz.RouteDeniedMessage(permission))
			return
		}
		h(w, r, u)
	}
}

// checkRoles refuses, at New, a role of a token entry (or the admin role
// of a gateway without tokens) that the RBAC provider does not define, so
// that a typo is a start-up error rather than every request failing
// closed.
func (s *Server) checkRoles(tokens []config.GatewayToken, defaultRole string) error {
	if !s.authz.Enabled() {
		return nil
	}
	if len(tokens) == 0 {
		if err := s.authz.ValidateRole(config.AdminRole, "the role of a gateway without tokens"); err != nil {
			return fmt.Errorf("gateway: %w (define it under authorization.provider.config.roles, or configure gateway.tokens)", err)
		}
	}
	for i, t := range tokens {
		if err := s.authz.ValidateRole(t.EffectiveRole(defaultRole), fmt.Sprintf("gateway.tokens[%d].role", i)); err != nil {
			return fmt.Errorf("gateway: %w", err)
		}
	}
	return nil
}

// visibleModels returns the configured models the caller's role may see
// (model:list through the provider's filter; fail_closed on failure).
func (s *Server) visibleModels(r *http.Request, u *principal) []config.Model {
	if !s.authz.Enabled() {
		return s.cfg.Models
	}
	names := make([]string, len(s.cfg.Models))
	for i, m := range s.cfg.Models {
		names[i] = m.Name
	}
	keep := map[string]bool{}
	for _, n := range s.authz.Visible(r.Context(), s.authzPrincipal(u), authz.ResourceModel, names) {
		keep[n] = true
	}
	var out []config.Model
	for _, m := range s.cfg.Models {
		if keep[m.Name] {
			out = append(out, m)
		}
	}
	return out
}

// getModel is GET /api/models/{name}: 404 for an unknown model, 403 when
// the caller's role may not use it (DeerFlow's models router).
func (s *Server) getModel(w http.ResponseWriter, r *http.Request, u *principal) {
	name := r.PathValue("name")
	m, ok := s.cfg.Model(name)
	if !ok {
		writeError(w, http.StatusNotFound, "Model '%s' not found", name)
		return
	}
	if !s.authz.AllowModel(r.Context(), s.authzPrincipal(u), name) {
		writeError(w, http.StatusForbidden, "%s", (&authz.ModelDeniedError{Model: name}).Error())
		return
	}
	writeJSON(w, http.StatusOK, modelJSON(*m))
}

// isModelDenied reports whether a build error is a model the role may
// not use (403).
func isModelDenied(err error) bool {
	var md *authz.ModelDeniedError
	return errors.As(err, &md)
}
