package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools/mcpauth"
)

// Defaults of MCPLoginOptions.
const (
	defaultMaxPendingLogins = 64
	// mcpLoginCallbackPath is the route the authorization server
	// redirects the browser to.
	mcpLoginCallbackPath = "/api/mcp/oauth/callback"
	// loginExchangeTimeout bounds the token exchange a callback waits for.
	loginExchangeTimeout = 60 * time.Second
	// maxLoginScopes bounds the scopes a start request may add.
	maxLoginScopes = 32
)

// MCPLoginOptions configure the MCP login routes (docs/api.md, "MCP
// login"): a user logs in to an http MCP server that asks for
// authorization, and that user's runs then use the tokens. The zero value
// (no Store) turns the routes off: they answer 501.
type MCPLoginOptions struct {
	// Store receives each user's tokens; runs read them through the MCP
	// manager's mcpauth.Stored on the same store. nil turns the routes off.
	Store mcpauth.Store
	// Client is how Antler presents itself to authorization servers; the
	// zero value registers dynamically as "Antler".
	Client mcpauth.Client
	// Server returns the MCP server name as user's runs see it (false: no
	// such server); nil looks it up in ExtensionsPath with the user's own
	// MCP file (UserMCP) over it.
	Server func(ctx context.Context, user, name string) (config.MCPServer, bool, error)
	// RedirectURL is the absolute URL of GET /api/mcp/oauth/callback as
	// the browser reaches it; "" derives it from each start request (its
	// Host, X-Forwarded-Host and X-Forwarded-Proto).
	RedirectURL string
	// MaxPending bounds the logins waiting for their callback, all users
	// together; 0 means 64.
	MaxPending int
	// Timeout bounds one login from start to callback; 0 means
	// mcpauth.DefaultLoginTimeout (10 minutes).
	Timeout time.Duration
}

// check refuses a RedirectURL that is not an absolute http(s) URL.
func (o MCPLoginOptions) check() error {
	if o.RedirectURL == "" {
		return nil
	}
	u, err := url.Parse(o.RedirectURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("gateway: the MCP login redirect URL %q is not an absolute http(s) URL", o.RedirectURL)
	}
	return nil
}

// mcpLogins are the logins waiting for their callback, by state.
type mcpLogins struct {
	mu       sync.Mutex
	pending  map[string]*pendingLogin // guarded by mu
	reserved int                      // guarded by mu: slots of starts still running Begin
}

type pendingLogin struct {
	user, server string
	flow         *mcpauth.Flow
}

// mcpLoginStart answers POST /api/mcp/oauth/{name}/start: the
// authorization URL for the caller's login to server name, asking for the
// body's optional "scopes" besides the server's (a step-up). The state in
// it binds the callback to the caller.
func (s *Server) mcpLoginStart(w http.ResponseWriter, r *http.Request, u *principal) {
	o := s.opts.MCPLogin
	if o.Store == nil {
		writeError(w, http.StatusNotImplemented, "MCP login is not configured on this gateway")
		return
	}
	var body struct {
		Scopes []string `json:"scopes"`
	}
	if !s.decodeJSON(w, r, &body) {
		return
	}
	if len(body.Scopes) > maxLoginScopes {
		writeError(w, http.StatusUnprocessableEntity, "scopes: at most %d", maxLoginScopes)
		return
	}
	srv, ok := s.mcpLoginServer(w, r, u)
	if !ok {
		return
	}
	if !s.logins.reserve(cmp.Or(o.MaxPending, defaultMaxPendingLogins)) {
		writeError(w, http.StatusTooManyRequests, "Too many MCP logins in progress; retry later")
		return
	}
	timeout := cmp.Or(o.Timeout, mcpauth.DefaultLoginTimeout)
	redirect := cmp.Or(o.RedirectURL, callbackURL(r))
	f, err := mcpauth.Begin(r.Context(), mcpauth.LoginOptions{Client: o.Client, Store: o.Store, Timeout: timeout, Scopes: body.Scopes}, u.ID, srv, redirect)
	switch {
	case errors.Is(err, mcpauth.ErrNotAsked):
		s.logins.release()
		writeError(w, http.StatusConflict, "MCP server '%s' did not ask for authorization: there is nothing to log in to", srv.Name)
		return
	case err != nil:
		s.logins.release()
		writeError(w, http.StatusBadGateway, "MCP login to '%s': %v", srv.Name, err)
		return
	case f.State == "":
		f.Cancel()
		s.logins.release()
		writeError(w, http.StatusBadGateway, "MCP login to '%s': the authorization URL carries no state", srv.Name)
		return
	}
	s.logins.add(f.State, &pendingLogin{user: u.ID, server: srv.Name, flow: f})
	stop := context.AfterFunc(s.baseCtx, f.Cancel) // gateway closing
	go func() {
		<-f.Done()
		stop()
		s.logins.remove(f.State)
	}()
	writeJSON(w, http.StatusOK, map[string]any{
		"server":            srv.Name,
		"authorization_url": f.URL,
		"redirect_uri":      redirect,
		"expires_at":        isoTime(time.Now().Add(timeout)),
	})
}

// mcpLoginServer finds the server of the route for user u and checks that
// a login applies to it, answering the error itself.
func (s *Server) mcpLoginServer(w http.ResponseWriter, r *http.Request, u *principal) (config.MCPServer, bool) {
	name := r.PathValue("name")
	lookup := s.opts.MCPLogin.Server
	if lookup == nil {
		lookup = s.extensionsServer
	}
	srv, ok, err := lookup(r.Context(), u.ID, name)
	switch {
	case err != nil:
		s.internal(w, "cannot read the MCP servers: "+err.Error(), err)
		return srv, false
	case !ok:
		writeError(w, http.StatusNotFound, "MCP server '%s' not found", name)
		return srv, false
	case srv.Type != "http":
		writeError(w, http.StatusBadRequest, "MCP server '%s' uses the %s transport: logins apply to http (streamable HTTP) servers", name, srv.Type)
		return srv, false
	case srv.OAuth != nil && srv.OAuth.Enabled && srv.OAuth.GrantType != config.GrantAuthorizationCode:
		writeError(w, http.StatusBadRequest, "MCP server '%s' is authorized by its oauth block (%s grant): there is nothing to log in to", name, srv.OAuth.GrantType)
		return srv, false
	}
	return srv, true
}

// extensionsServer looks name up among the servers user's runs see: the
// extensions file's, with the user's own MCP file over them (UserMCP).
func (s *Server) extensionsServer(_ context.Context, user, name string) (config.MCPServer, bool, error) {
	ext, err := s.sharedMCP()
	if err != nil {
		return config.MCPServer{}, false, err
	}
	if s.opts.UserMCP != nil {
		u, err := s.opts.UserMCP.Load(user)
		if err != nil {
			return config.MCPServer{}, false, err
		}
		ext = u.View(ext)
	}
	srv, ok := ext.MCPServers[name]
	return srv, ok, nil
}

// callbackURL derives the callback's URL from the start request r.
func callbackURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	host := cmp.Or(r.Header.Get("X-Forwarded-Host"), r.Host)
	return scheme + "://" + host + mcpLoginCallbackPath
}

// mcpLoginCallback answers GET /api/mcp/oauth/callback, where the
// authorization server sends the browser back. It needs no bearer token
// (a browser redirect carries none): the state, known only to the user
// who started the login, names the login and so the user whose tokens
// are stored.
func (s *Server) mcpLoginCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := s.logins.take(q.Get("state"))
	if p == nil {
		loginPage(w, http.StatusBadRequest, "This login is unknown, finished or expired: start it again.")
		return
	}
	if err := p.flow.Complete(q); err != nil {
		loginPage(w, http.StatusBadRequest, fmt.Sprintf("Login to MCP server '%s' failed: %v", p.server, err))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), loginExchangeTimeout)
	defer cancel()
	if err := p.flow.Wait(ctx); err != nil {
		loginPage(w, http.StatusBadGateway, fmt.Sprintf("Login to MCP server '%s' failed: %v", p.server, err))
		return
	}
	s.logger.Info("MCP login stored", "mcp_server", p.server, "user", p.user)
	loginPage(w, http.StatusOK, fmt.Sprintf("Logged in to MCP server '%s'. You can close this window.", p.server))
}

func loginPage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>Antler MCP login</title><p>%s</p>\n", html.EscapeString(msg))
}

// mcpLoginStatus answers GET /api/mcp/oauth/{name}/status: whether the
// caller has a stored login to the server, never its tokens.
func (s *Server) mcpLoginStatus(w http.ResponseWriter, r *http.Request, u *principal) {
	st := s.opts.MCPLogin.Store
	if st == nil {
		writeError(w, http.StatusNotImplemented, "MCP login is not configured on this gateway")
		return
	}
	srv, ok := s.mcpLoginServer(w, r, u)
	if !ok {
		return
	}
	rec, err := st.Load(r.Context(), u.ID, srv.Name)
	if err != nil {
		s.internal(w, "cannot read the stored login: "+err.Error(), err)
		return
	}
	out := map[string]any{"server": srv.Name, "logged_in": false}
	if rec != nil && rec.URL == srv.URL {
		out["logged_in"] = true
		out["refreshable"] = rec.RefreshToken != ""
		out["scopes"] = rec.Scopes
		if !rec.Expiry.IsZero() {
			out["expires_at"] = isoTime(rec.Expiry)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// mcpLogout answers DELETE /api/mcp/oauth/{name}: the caller's stored
// tokens are revoked at the authorization server (best effort) and
// deleted.
func (s *Server) mcpLogout(w http.ResponseWriter, r *http.Request, u *principal) {
	st := s.opts.MCPLogin.Store
	if st == nil {
		writeError(w, http.StatusNotImplemented, "MCP login is not configured on this gateway")
		return
	}
	name := r.PathValue("name")
	rec, err := st.Load(r.Context(), u.ID, name)
	revoked := false
	if err == nil && rec != nil {
		if rerr := mcpauth.Revoke(r.Context(), s.opts.MCPLogin.Client, rec); rerr != nil {
			s.logger.Info("MCP logout: tokens not revoked", "mcp_server", name, "user", u.ID, "err", rerr)
		} else {
			revoked = true
		}
		err = st.Delete(r.Context(), u.ID, name)
	}
	if err != nil {
		s.internal(w, "cannot delete the stored login: "+err.Error(), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"server": name, "logged_out": rec != nil, "revoked": revoked})
}

// reserve takes a slot for a login about to start, false when max are
// taken.
func (l *mcpLogins) reserve(max int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending)+l.reserved >= max {
		return false
	}
	l.reserved++
	return true
}

func (l *mcpLogins) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reserved--
}

// add turns a reserved slot into a pending login.
func (l *mcpLogins) add(state string, p *pendingLogin) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reserved--
	if l.pending == nil {
		l.pending = map[string]*pendingLogin{}
	}
	l.pending[state] = p
}

func (l *mcpLogins) remove(state string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pending, state)
}

// take removes and returns the pending login of state; a state is used
// once.
func (l *mcpLogins) take(state string) *pendingLogin {
	if state == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.pending[state]
	delete(l.pending, state)
	return p
}
