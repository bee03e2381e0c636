package gateway

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/vpath"
)

// principal is the authenticated caller.
type principal struct {
	ID    string
	Admin bool
	// Role is the authorization role: the token entry's role, "admin"
	// for an admin, else authorization.default_role.
	Role string
}

// handlerFunc is a route handler that runs as the authenticated user.
type handlerFunc func(w http.ResponseWriter, r *http.Request, u *principal)

// tokenTable indexes tokens by their SHA-256, so that a lookup does not
// compare secrets byte by byte.
func tokenTable(tokens []config.GatewayToken, defaultRole string) (map[[32]byte]*principal, error) {
	out := make(map[[32]byte]*principal, len(tokens))
	for i, t := range tokens {
		if strings.TrimSpace(t.Token) == "" {
			return nil, fmt.Errorf("gateway: gateway.tokens[%d].token is empty", i)
		}
		if !vpath.ValidID(t.UserID) {
			return nil, fmt.Errorf("gateway: gateway.tokens[%d].user_id %q is not a valid user id (letters, digits, '-', '_'; at most %d)",
				i, t.UserID, vpath.MaxIDLen)
		}
		h := sha256.Sum256([]byte(t.Token))
		if _, dup := out[h]; dup {
			return nil, fmt.Errorf("gateway: gateway.tokens[%d] repeats an earlier token", i)
		}
		if t.Admin && t.Role != "" && t.Role != config.AdminRole {
			return nil, fmt.Errorf("gateway: gateway.tokens[%d].role %q contradicts admin: true", i, t.Role)
		}
		out[h] = &principal{ID: t.UserID, Admin: t.IsAdmin(), Role: t.EffectiveRole(defaultRole)}
	}
	return out, nil
}

// authenticate returns the caller of r, or nil when tokens are configured
// and r carries no valid one.
func (s *Server) authenticate(r *http.Request) *principal {
	if len(s.tokens) == 0 {
		return s.defUser
	}
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return nil
	}
	return s.tokens[sha256.Sum256([]byte(strings.TrimSpace(tok)))]
}

// auth wraps a route: 401 without a valid token (only possible when
// tokens are configured: a tokenless gateway never answers 401, which
// would send DeerFlow's frontend to its login page).
func (s *Server) auth(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := s.authenticate(r)
		if u == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="antler"`)
			writeError(w, http.StatusUnauthorized, "Not authenticated")
			return
		}
		h(w, r, u)
	})
}

// admin wraps a route that changes process-wide settings.
func (s *Server) admin(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, u *principal) {
		if !u.Admin {
			writeError(w, http.StatusForbidden, "Admin privileges required to manage MCP configuration.")
			return
		}
		h(w, r, u)
	}
}
