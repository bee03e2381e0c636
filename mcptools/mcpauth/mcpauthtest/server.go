// Package mcpauthtest is a local OAuth authorization server and the MCP
// server it protects, for the tests of MCP authorization (mcptools/mcpauth,
// the CLI's login command, the gateway's login routes). It serves on
// 127.0.0.1 only and lives as long as its test.
package mcpauthtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is a local authorization server and the MCP server it
// protects, in one httptest server: protected resource metadata at the
// path-aware well-known location, authorization server metadata, dynamic
// registration, an authorization endpoint that approves at once, a token
// endpoint (authorization_code with PKCE S256, refresh_token), and /mcp,
// which wants a bearer token it issued and, for the tool "admin", the
// scope "admin" (403 insufficient_scope otherwise).
type Server struct {
	srv *httptest.Server

	// ExpiresIn is the lifetime of issued access tokens in seconds (3600
	// from New); set it before the first request.
	ExpiresIn int
	// AlwaysInsufficient makes "admin" refuse every token (retry limit);
	// set it before the first request.
	AlwaysInsufficient bool

	mu         sync.Mutex
	challenges map[string]string   // code -> S256 challenge
	codeScope  map[string]string   // code -> scope
	tokens     map[string][]string // access token -> scopes
	refresh    map[string][]string // refresh token -> scopes
	n          int
	authorizeQ []url.Values // authorization requests
	grants     []string     // grant_type of each token request
	seen       []string     // bearer tokens /mcp accepted
	revoked    int          // tokens revoked
}

// New starts the server on 127.0.0.1; it is closed when t ends.
func New(t testing.TB) *Server {
	a := &Server{ExpiresIn: 3600, challenges: map[string]string{}, codeScope: map[string]string{},
		tokens: map[string][]string{}, refresh: map[string][]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", a.prm)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", a.asm)
	mux.HandleFunc("POST /register", a.register)
	mux.HandleFunc("GET /authorize", a.authorize)
	mux.HandleFunc("POST /token", a.token)
	mux.HandleFunc("POST /revoke", a.revoke)
	s := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	for _, name := range []string{"whoami", "admin"} {
		mcp.AddTool(s, &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
				tok := strings.TrimPrefix(req.Extra.Header.Get("Authorization"), "Bearer ")
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " " + tok}}}, nil, nil
			})
	}
	mux.Handle("/mcp", a.protect(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)))
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

// URL is the protected MCP server's endpoint.
func (a *Server) URL() string { return a.srv.URL + "/mcp" }

// Issuer is the authorization server's issuer (its base URL).
func (a *Server) Issuer() string { return a.srv.URL }

// writeJSONStatus writes v as JSON with status (the content type set
// first, so that clients parse an error body as JSON).
func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (a *Server) prm(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{"resource": a.URL(), "authorization_servers": []string{a.srv.URL},
		"scopes_supported": []string{"read"}})
}

func (a *Server) asm(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{"issuer": a.srv.URL, "authorization_endpoint": a.srv.URL + "/authorize",
		"token_endpoint": a.srv.URL + "/token", "registration_endpoint": a.srv.URL + "/register",
		"revocation_endpoint":      a.srv.URL + "/revoke",
		"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"}})
}

func (a *Server) register(w http.ResponseWriter, r *http.Request) {
	var md map[string]any
	_ = json.NewDecoder(r.Body).Decode(&md)
	md["client_id"] = "client-1"
	md["token_endpoint_auth_method"] = "none"
	writeJSONStatus(w, http.StatusCreated, md)
}

func (a *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	a.n++
	code := fmt.Sprintf("code-%d", a.n)
	a.challenges[code] = q.Get("code_challenge")
	a.codeScope[code] = q.Get("scope")
	a.authorizeQ = append(a.authorizeQ, q)
	a.mu.Unlock()
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") != a.URL() {
		http.Error(w, "want PKCE S256 and the resource parameter", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(q.Get("redirect_uri"))
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (a *Server) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	a.mu.Lock()
	defer a.mu.Unlock()
	grant := r.PostForm.Get("grant_type")
	a.grants = append(a.grants, grant)
	var scopes []string
	switch grant {
	case "authorization_code":
		code := r.PostForm.Get("code")
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if a.challenges[code] == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != a.challenges[code] {
			writeJSONStatus(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		scopes = strings.Fields(a.codeScope[code])
		delete(a.challenges, code)
	case "refresh_token":
		var ok bool
		if scopes, ok = a.refresh[r.PostForm.Get("refresh_token")]; !ok {
			writeJSONStatus(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
	default:
		writeJSONStatus(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	a.n++
	at, rt := fmt.Sprintf("at-%d", a.n), fmt.Sprintf("rt-%d", a.n)
	a.tokens[at], a.refresh[rt] = scopes, scopes
	writeJSON(w, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": a.ExpiresIn,
		"refresh_token": rt, "scope": strings.Join(scopes, " ")})
}

// Issue makes an access and refresh token as if a login had happened.
func (a *Server) Issue(scopes ...string) (access, refresh string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	access, refresh = fmt.Sprintf("at-%d", a.n), fmt.Sprintf("rt-%d", a.n)
	a.tokens[access], a.refresh[refresh] = scopes, scopes
	return access, refresh
}

func (a *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		challenge := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, a.srv.URL)
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		a.mu.Lock()
		scopes, ok := a.tokens[tok]
		if ok {
			a.seen = append(a.seen, tok)
		}
		a.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		if msg.Method == "tools/call" && msg.Params.Name == "admin" && (a.AlwaysInsufficient || !slices.Contains(scopes, "admin")) {
			w.Header().Set("WWW-Authenticate", challenge+`, error="insufficient_scope", scope="read admin"`)
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Counts returns the number of authorization requests and the grant_type
// of each token request so far.
func (a *Server) Counts() (authorizations int, grants []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.authorizeQ), slices.Clone(a.grants)
}

// AuthorizeQueries returns the query of each authorization request so far.
func (a *Server) AuthorizeQueries() []url.Values {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.authorizeQ)
}

// Seen returns the bearer tokens the MCP endpoint accepted so far.
func (a *Server) Seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

// revoke revokes an access or refresh token (RFC 7009) of a public
// client: it is then refused.
func (a *Server) revoke(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	if r.PostForm.Get("client_id") == "" {
		http.Error(w, "no client_id", http.StatusUnauthorized)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	tok := r.PostForm.Get("token")
	if _, ok := a.tokens[tok]; ok {
		delete(a.tokens, tok)
		a.revoked++
	}
	if _, ok := a.refresh[tok]; ok {
		delete(a.refresh, tok)
		a.revoked++
	}
}

// Revoked returns the number of tokens revoked so far.
func (a *Server) Revoked() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.revoked
}
