package mcptools

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// Authorizer gives the OAuth handler of a streamable HTTP server's session
// for one user: how the session authorizes as the MCP specification's
// authorization section defines it (package mcpauth implements it with a
// user's stored tokens, or with the whole flow). A nil handler means none.
type Authorizer interface {
	OAuthHandler(ctx context.Context, s config.MCPServer, user string) (auth.OAuthHandler, error)
}

// authorizationError is an error of an Authorizer's handler that tells
// the user what to do (mcpauth.LoginRequiredError): a failed call shows
// it as it is, rather than the transport's "rejected".
type authorizationError interface {
	error
	AuthorizationRequired()
}

// userScopePrefix starts the pool scope of a user's own session with an
// http server (Options.Authorizer set, a call made for a user other than
// Options.AuthUser).
const userScopePrefix = "oauth:"

// sessionUserKey carries the user of a session being connected.
type sessionUserKey struct{}

func withSessionUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, sessionUserKey{}, user)
}

// authorizes reports whether the sessions of s are authorized by
// Options.Authorizer: http servers without a client_credentials or
// refresh_token oauth block.
func (m *Manager) authorizes(s *server) bool {
	return m.opts.Authorizer != nil && s.cfg.Type == "http" && s.tokens == nil
}

// userScope is the pool scope of call on s: a session of its own for a
// user whose tokens are not the control session's, "" otherwise.
func (m *Manager) userScope(s *server, call *tool.Call) string {
	if call == nil || call.UserID == "" || call.UserID == m.opts.AuthUser || !m.authorizes(s) {
		return ""
	}
	return userScopePrefix + call.UserID
}

// authorize sets the OAuth handler of an http session: for the user the
// session is connected for (ctx), else Options.AuthUser.
func (m *Manager) authorize(ctx context.Context, s *server, t *mcp.StreamableClientTransport) error {
	if !m.authorizes(s) {
		return nil
	}
	user, _ := ctx.Value(sessionUserKey{}).(string)
	if user == "" {
		user = m.opts.AuthUser
	}
	h, err := m.opts.Authorizer.OAuthHandler(ctx, s.cfg, user)
	if err != nil {
		return err
	}
	if h != nil {
		t.OAuthHandler = h
	}
	return nil
}

// scopeUser is the user of a user's own session scope, "" for others.
func scopeUser(scope string) string {
	u, ok := strings.CutPrefix(scope, userScopePrefix)
	if !ok {
		return ""
	}
	return u
}
