package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/antlerhq/antler/config"
)

// DefaultRefreshSkew is how long before its expiry a token is refreshed
// when Refresh.Skew is 0.
const DefaultRefreshSkew = 60 * time.Second

// Refresh configures the refreshing of stored tokens. The zero value
// refreshes DefaultRefreshSkew before expiry and logs nowhere.
type Refresh struct {
	// Skew is how long before its expiry a token is refreshed; 0 is
	// DefaultRefreshSkew, negative refreshes at expiry.
	Skew time.Duration
	// Logger receives a warning when a refreshed token cannot be saved
	// (never a token); nil discards.
	Logger *slog.Logger
}

// refresher refreshes and saves the tokens of one user and server.
type refresher struct {
	skew   time.Duration
	log    *slog.Logger
	client *http.Client
	save   func(*Record) error
}

func (r Refresh) with(c Client, st Store, user, server string) refresher {
	skew := r.Skew
	switch {
	case skew == 0:
		skew = DefaultRefreshSkew
	case skew < 0:
		skew = 0
	}
	log := r.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return refresher{skew: skew, log: log.With("mcp_server", server, "user", user), client: c.httpClient(),
		save: func(rec *Record) error { return st.Save(context.Background(), user, server, rec) }}
}

// source returns the token source of rec: its access token until skew
// before expiry, then a refreshed one, saved to the store.
func (r refresher) source(_ context.Context, rec *Record) oauth2.TokenSource {
	s := &savingSource{r: r, rec: *rec}
	return oauth2.ReuseTokenSourceWithExpiry(rec.Token(), s, r.skew)
}

// savingSource refreshes a record's token and saves the result; the
// oauth2.ReuseTokenSource around it calls it only when the token is due.
type savingSource struct {
	r refresher

	mu  sync.Mutex
	rec Record // guarded by mu
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec.RefreshToken == "" {
		// invalid_grant makes the SDK's transport send the request
		// without a token, so that the server's 401 asks for a login.
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the access token expired and there is no refresh token"}
	}
	// The refresh outlives any one request (the SDK keeps the source for
	// the session): it runs on a background context with our client.
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.r.client)
	ctx, cancel := context.WithTimeout(ctx, tokenRequestTimeout)
	defer cancel()
	tok, err := s.rec.config().TokenSource(ctx, &oauth2.Token{RefreshToken: s.rec.RefreshToken}).Token()
	if err != nil {
		return nil, err
	}
	s.rec.setToken(tok)
	s.rec.Saved = time.Now()
	rec := s.rec
	if err := s.r.save(&rec); err != nil {
		s.r.log.Warn("MCP OAuth: the refreshed token could not be stored; it is used for this session only", "err", err)
	}
	return s.rec.Token(), nil
}

// tokenRequestTimeout bounds one refresh request.
const tokenRequestTimeout = 30 * time.Second

// Stored gives running sessions a user's stored tokens (an
// mcptools.Authorizer): they are sent, refreshed before they expire and
// saved again; a server that asks for authorization (no token, a revoked
// one, or more scope) gets a LoginRequiredError, never an interactive flow.
type Stored struct {
	Client
	Store   Store
	Refresh Refresh
	// LoginHint says how user logs in to server, for LoginRequiredError,
	// with the scopes an insufficient_scope challenge named (else none);
	// nil says "log in to the MCP server".
	LoginHint func(server, user string, scopes []string) string
}

// OAuthHandler returns the handler of user's session with srv.
func (s *Stored) OAuthHandler(_ context.Context, srv config.MCPServer, user string) (auth.OAuthHandler, error) {
	if s.Store == nil {
		return nil, errors.New("mcpauth: Stored needs a Store")
	}
	return &storedHandler{s: s, srv: srv, user: user, r: s.Refresh.with(s.Client, s.Store, user, srv.Name)}, nil
}

type storedHandler struct {
	s    *Stored
	srv  config.MCPServer
	user string
	r    refresher

	mu     sync.Mutex
	loaded bool               // guarded by mu
	ts     oauth2.TokenSource // guarded by mu; nil without a record
	from   string             // guarded by mu; the access token of the record ts was built from
}

func (h *storedHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded {
		rec, err := h.s.Store.Load(ctx, h.user, h.srv.Name)
		if err != nil {
			return nil, fmt.Errorf("loading the tokens of MCP server '%s': %w", h.srv.Name, err)
		}
		if rec != nil && rec.URL == h.srv.URL {
			h.ts, h.from = h.r.source(ctx, rec), rec.AccessToken
		}
		h.loaded = true
	}
	return h.ts, nil
}

// reloaded replaces the handler's token source when the store holds a
// login other than the one in use (the user logged in again, e.g. with
// more scope, while the session was open), and reports whether it did.
func (h *storedHandler) reloaded(ctx context.Context) bool {
	rec, err := h.s.Store.Load(ctx, h.user, h.srv.Name)
	if err != nil || rec == nil || rec.URL != h.srv.URL {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ts != nil {
		// The cached token: no request unless it is due for a refresh,
		// which, failing, leaves the record the source was built from.
		cur, err := h.ts.Token()
		if err == nil && cur.AccessToken == rec.AccessToken || err != nil && h.from == rec.AccessToken {
			return false
		}
	}
	h.ts, h.from, h.loaded = h.r.source(ctx, rec), rec.AccessToken, true
	return true
}

func (h *storedHandler) Authorize(ctx context.Context, _ *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	bearer := map[string]string{}
	for _, c := range challenges {
		if c.Scheme == "bearer" {
			bearer = c.Params
			break
		}
	}
	if resp.StatusCode == http.StatusForbidden && bearer["error"] != "insufficient_scope" {
		return nil // an ordinary 403: the retried request reports it
	}
	if h.reloaded(ctx) {
		return nil // the request is retried with the newer login
	}
	e := &LoginRequiredError{Server: h.srv.Name, User: h.user, Hint: "log in to the MCP server"}
	if resp.StatusCode == http.StatusForbidden {
		e.Scopes = strings.Fields(bearer["scope"])
	}
	if h.s.LoginHint != nil {
		e.Hint = h.s.LoginHint(h.srv.Name, h.user, e.Scopes)
	}
	return e
}

// LoginRequiredError says that a server asks a user for authorization
// that only a login can give: no stored token, one the server refused, or
// one without the scopes it needs (Scopes, from its insufficient_scope
// challenge).
type LoginRequiredError struct {
	Server, User string
	Scopes       []string
	Hint         string
}

// AuthorizationRequired marks the error for mcptools, which shows it to
// the model as it is.
func (e *LoginRequiredError) AuthorizationRequired() {}

func (e *LoginRequiredError) Error() string {
	if len(e.Scopes) > 0 {
		return fmt.Sprintf("MCP server '%s' needs more authorization (scope %q) for user '%s': %s", e.Server, strings.Join(e.Scopes, " "), e.User, e.Hint)
	}
	return fmt.Sprintf("MCP server '%s' needs authorization for user '%s': %s", e.Server, e.User, e.Hint)
}

// ResultFromRedirect reads the authorization response from the query of
// the redirect: code, state and iss, or the error the server sent.
func ResultFromRedirect(q url.Values) (*auth.AuthorizationResult, error) {
	if e := q.Get("error"); e != "" {
		if d := q.Get("error_description"); d != "" {
			e += ": " + d
		}
		return nil, fmt.Errorf("the authorization server refused: %s", e)
	}
	if q.Get("code") == "" {
		return nil, errors.New("the redirect carries no authorization code")
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
