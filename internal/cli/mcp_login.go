package cli

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools/mcpauth"
)

// mcpOAuthDir is the folder under the home that keeps each user's MCP
// logins: mcp_oauth/<user>/<server>.json, 0600 (mcpauth.FileStore).
const mcpOAuthDir = "mcp_oauth"

// loginCallbackPath is the path of the loopback redirect of `mcp login`.
const loginCallbackPath = "/callback"

// loginShutdownGrace bounds how long the loopback listener waits, once the
// login ended, for the browser's page to be written.
const loginShutdownGrace = 5 * time.Second

// callbackExchangeTimeout bounds the token exchange the loopback redirect
// waits for before it answers the browser.
const callbackExchangeTimeout = 60 * time.Second

// mcpRedirectEnv names the environment variable with the absolute URL of
// the gateway's login callback as browsers reach it (serve; unset: from
// each start request's Host and X-Forwarded-* headers).
const mcpRedirectEnv = "ANTLER_MCP_OAUTH_REDIRECT_URL"

// mcpAuthStore is the store of the MCP logins under the home of g.
func mcpAuthStore(g *globals) (mcpauth.FileStore, error) {
	p, err := config.ResolvePaths(g.config, g.extensions, g.home, g.opts.Getenv)
	if err != nil {
		return mcpauth.FileStore{}, err
	}
	home, err := filepath.Abs(p.Home)
	if err != nil {
		return mcpauth.FileStore{}, err
	}
	return mcpauth.FileStore{Dir: filepath.Join(home, mcpOAuthDir)}, nil
}

// mcpLoginHint says how user logs in to server, with scopes (those an
// insufficient_scope challenge named): the LoginHint of the runs'
// mcpauth.Stored, which the model sees in the error of a call.
func mcpLoginHint(server, user string, scopes []string) string {
	cmd := "antler mcp login " + server
	if user != defaultUserFlag {
		cmd += " --user " + user
	}
	for _, sc := range scopes {
		cmd += " --scope " + sc
	}
	return fmt.Sprintf("run `%s` (or, through the gateway, POST /api/mcp/oauth/%s/start), then retry", cmd, server)
}

// defaultUserFlag is the default of --user.
const defaultUserFlag = "default"

// storedAuthorizer authorizes the sessions of the MCP servers that ask for
// authorization with the logins stored under home: each user's tokens,
// refreshed before they expire, and an error naming `antler mcp login`
// when there are none. logger hears of a refreshed token that could not be
// stored (never a token).
func storedAuthorizer(home string, logger *slog.Logger) *mcpauth.Stored {
	return &mcpauth.Stored{Store: mcpauth.FileStore{Dir: filepath.Join(home, mcpOAuthDir)}, LoginHint: mcpLoginHint,
		Refresh: mcpauth.Refresh{Logger: logger}}
}

// loginServer returns server name as --user's runs see it (the
// extensions file with the user's own MCP file over it), which must use
// the http transport.
func loginServer(g *globals, name string) (config.MCPServer, error) {
	ext, err := loadMCPExtensions(g)
	if err != nil {
		return config.MCPServer{}, err
	}
	u, err := loadCLIUserMCP(g)
	if err != nil {
		return config.MCPServer{}, err
	}
	ext = u.View(ext)
	s, ok := ext.MCPServers[name]
	if !ok {
		return s, noServerError(ext.Path, name, ext.ServerNames())
	}
	if s.Err != nil {
		return s, &exitError{code: 2, err: s.Err}
	}
	if s.Type != "http" {
		return s, usageErrorf("MCP server '%s' uses the %s transport: logins apply to http (streamable HTTP) servers", name, s.Type)
	}
	if o := s.OAuth; o != nil && o.Enabled && o.GrantType != config.GrantAuthorizationCode {
		return s, usageErrorf("MCP server '%s' is authorized by its oauth block (%s grant) in %s: there is nothing to log in to", name, o.GrantType, ext.Path)
	}
	return s, nil
}

func newMCPLoginCmd(g *globals) *cobra.Command {
	var (
		port    int
		timeout time.Duration
		scopes  []string
	)
	c := &cobra.Command{
		Use:   "login NAME",
		Short: "Log in to an MCP server that asks for authorization (OAuth), for --user",
		Long: `Log in to an http MCP server that asks for authorization as the MCP
specification defines it (OAuth 2.1 with PKCE): discover its authorization
server, register Antler as a client, print the authorization URL to open in
a browser, and wait for the redirect on 127.0.0.1 (--port, random by
default). The tokens are stored for --user under the home
(mcp_oauth/USER/NAME.json, readable by the owner only) and used, refreshed
before they expire, by that user's runs. Tokens are never printed or
logged. --scope asks for scopes besides the server's, when a call said it
needs more. The wait is bounded by --timeout; Ctrl-C cancels.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServerNames(g),
		RunE: func(c *cobra.Command, args []string) error {
			if err := validateID("user", g.user); err != nil {
				return err
			}
			if port < 0 || port > 65535 {
				return usageErrorf("--port %d: want 0 (any free port) to 65535", port)
			}
			if timeout <= 0 {
				return usageErrorf("--timeout %s: want a positive duration", timeout)
			}
			srv, err := loginServer(g, args[0])
			if err != nil {
				return err
			}
			st, err := mcpAuthStore(g)
			if err != nil {
				return err
			}
			return mcpLogin(c.Context(), c.OutOrStdout(), st, g.user, srv, loginFlags{port: port, timeout: timeout, scopes: scopes})
		},
	}
	c.Flags().IntVar(&port, "port", 0, "port of the loopback redirect on 127.0.0.1 (0: any free port)")
	c.Flags().DurationVar(&timeout, "timeout", mcpauth.DefaultLoginTimeout, "bound on the whole login, the browser's part included")
	c.Flags().StringSliceVar(&scopes, "scope", nil, "a scope to ask for besides the server's (repeatable; for a server that asked for more)")
	return c
}

// loginFlags are the flags of `mcp login`.
type loginFlags struct {
	port    int
	timeout time.Duration
	scopes  []string
}

// mcpLogin runs one login of user to srv with the redirect on
// 127.0.0.1:port, bounded by timeout and by ctx (Ctrl-C).
func mcpLogin(ctx context.Context, w io.Writer, st mcpauth.FileStore, user string, srv config.MCPServer, fl loginFlags) error {
	timeout := fl.timeout
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(fl.port)))
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("listening for the login redirect: %w", err)}
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://%s%s", ln.Addr(), loginCallbackPath)

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	f, err := mcpauth.Begin(ctx, mcpauth.LoginOptions{Store: st, Timeout: timeout, Scopes: fl.scopes}, user, srv, redirect)
	switch {
	case errors.Is(err, mcpauth.ErrNotAsked):
		fmt.Fprintf(w, "MCP server '%s' did not ask for authorization: there is nothing to log in to.\n", srv.Name)
		return nil
	case err != nil:
		return loginError(ctx, srv.Name, err, timeout)
	}
	defer f.Cancel()

	hs := &http.Server{Handler: loginCallback(f, srv.Name), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer func() {
		// The browser's page is answered before the listener goes; a
		// page still waiting is cut off after a bound.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loginShutdownGrace)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
	}()

	fmt.Fprintf(w, "To log in to MCP server '%s' as user '%s', open this URL in a browser:\n\n  %s\n\n", srv.Name, user, f.URL)
	fmt.Fprintf(w, "Waiting for the redirect to %s (up to %s; Ctrl-C cancels)...\n", redirect, timeout)
	if err := f.Wait(ctx); err != nil {
		return loginError(ctx, srv.Name, err, timeout)
	}
	rec, err := st.Load(ctx, user, srv.Name)
	if err != nil || rec == nil {
		return &exitError{code: 1, err: fmt.Errorf("the login ended but its tokens cannot be read back: %v", err)}
	}
	p, _ := st.Path(user, srv.Name)
	fmt.Fprintf(w, "Logged in to MCP server '%s' as user '%s' (%s). Tokens stored in %s.\n", srv.Name, user, recordState(rec, time.Now()), p)
	return nil
}

// loginError is the error of a login that failed, timed out or was
// cancelled.
func loginError(ctx context.Context, name string, err error, timeout time.Duration) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &exitError{code: 1, err: fmt.Errorf("login to MCP server '%s': no redirect within %s (--timeout)", name, timeout)}
	case ctx.Err() != nil:
		return &exitError{code: 1, err: fmt.Errorf("login to MCP server '%s' cancelled", name)}
	}
	return &exitError{code: 1, err: fmt.Errorf("login to MCP server '%s': %w", name, err)}
}

// loginCallback serves the loopback redirect: it hands the query to the
// flow if its state is the flow's, waits for the token exchange and
// answers the browser with a short page.
func loginCallback(f *mcpauth.Flow, name string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+loginCallbackPath, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("state") != f.State {
			loginPage(w, http.StatusBadRequest, "This redirect does not belong to the login in progress (state mismatch).")
			return
		}
		if err := f.Complete(q); err != nil {
			loginPage(w, http.StatusBadRequest, "Login failed: "+err.Error())
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), callbackExchangeTimeout)
		defer cancel()
		if err := f.Wait(ctx); err != nil {
			loginPage(w, http.StatusBadGateway, "Login failed: "+err.Error())
			return
		}
		loginPage(w, http.StatusOK, fmt.Sprintf("Logged in to MCP server '%s'. You can close this window.", name))
	})
	return mux
}

func loginPage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>Antler MCP login</title><p>%s</p>\n", html.EscapeString(msg))
}

func newMCPLogoutCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "logout NAME",
		Short: "Delete the stored login of --user to an MCP server",
		Long: `Revoke the tokens that antler mcp login stored for --user and the MCP
server NAME at the authorization server, when it announces a revocation
endpoint, and delete them; that user's runs then get "needs authorization"
from the server until the next login. A failed revocation is reported; the
tokens are deleted anyway.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServerNames(g),
		RunE: func(c *cobra.Command, args []string) error {
			if err := validateID("user", g.user); err != nil {
				return err
			}
			st, err := mcpAuthStore(g)
			if err != nil {
				return err
			}
			rec, err := st.Load(c.Context(), g.user, args[0])
			if err != nil {
				return err
			}
			if rec == nil {
				fmt.Fprintf(c.OutOrStdout(), "No stored login of user '%s' to MCP server '%s'.\n", g.user, args[0])
				return nil
			}
			revoked := "revoked and deleted"
			if err := mcpauth.Revoke(c.Context(), mcpauth.Client{}, rec); err != nil {
				revoked = "deleted, not revoked (" + err.Error() + ")"
			}
			if err := st.Delete(c.Context(), g.user, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Logged out of MCP server '%s' (user '%s'): its tokens are %s.\n", args[0], g.user, revoked)
			return nil
		},
	}
}

// recordState describes a stored login without its tokens: when the
// access token expires and whether it can be refreshed.
func recordState(rec *mcpauth.Record, now time.Time) string {
	refresh := "not refreshable"
	if rec.RefreshToken != "" {
		refresh = "refreshable"
	}
	switch {
	case rec.Expiry.IsZero():
		return "no expiry, " + refresh
	case rec.Expiry.After(now):
		return fmt.Sprintf("expires in %s, %s", rec.Expiry.Sub(now).Round(time.Second), refresh)
	}
	return fmt.Sprintf("expired %s ago, %s", now.Sub(rec.Expiry).Round(time.Second), refresh)
}

// mcpAuthState is the auth line of `mcp get` and `mcp list` for user and
// server s: "" for servers that take no login (stdio, sse, a static oauth
// block); else the stored login's state or that a login is required
// (loginRequired: the server asked and nothing stored answered it).
func mcpAuthState(ctx context.Context, st mcpauth.Store, user string, s config.MCPServer, loginRequired bool) string {
	if s.Type != "http" {
		return ""
	}
	if o := s.OAuth; o != nil && o.Enabled && o.GrantType != config.GrantAuthorizationCode {
		return ""
	}
	rec, err := st.Load(ctx, user, s.Name)
	switch {
	case err != nil:
		return "✗ stored login unreadable: " + err.Error()
	case loginRequired:
		return "✗ login required: " + mcpLoginHint(s.Name, user, nil)
	case rec != nil && rec.URL == s.URL:
		return fmt.Sprintf("✔ logged in as '%s' (%s)", user, recordState(rec, time.Now()))
	case s.OAuth != nil && s.OAuth.Enabled:
		return "✗ not logged in: " + mcpLoginHint(s.Name, user, nil)
	}
	return ""
}

// mcpAuthLine returns the login line of `mcp get` and `mcp list` for
// --user: a server and the error its check ended with (nil if none).
func mcpAuthLine(ctx context.Context, g *globals) (func(config.MCPServer, error) string, error) {
	st, err := mcpAuthStore(g)
	if err != nil {
		return nil, err
	}
	return func(s config.MCPServer, checkErr error) string {
		return mcpAuthState(ctx, st, g.user, s, errors.As(checkErr, new(*mcpauth.LoginRequiredError)))
	}, nil
}
