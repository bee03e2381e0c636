package mcpauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/mcptools/mcpauth"
	"github.com/antlerhq/antler/mcptools/mcpauth/mcpauthtest"
	"github.com/antlerhq/antler/tool"
)

func serverEntry(a *mcpauthtest.Server) config.MCPServer {
	return config.MCPServer{Name: "remote", Enabled: true, Type: "http", URL: a.URL()}
}

func newManager(t *testing.T, a *mcpauthtest.Server, az mcptools.Authorizer, authUser string) *mcptools.Manager {
	t.Helper()
	ext := &config.Extensions{MCPServers: map[string]config.MCPServer{"remote": serverEntry(a)}}
	m := mcptools.New(mcptools.Options{Extensions: mcptools.Static(ext), Authorizer: az, AuthUser: authUser})
	t.Cleanup(func() { m.Close() })
	return m
}

// call calls the server's tool for user and returns the result's text.
func call(t *testing.T, m *mcptools.Manager, user, name string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := m.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range m.Status() {
		if st.Err != nil {
			return st.Err.Error(), true
		}
	}
	for _, tl := range tools {
		if tl.Meta[mcptools.MetaTool] == name {
			res, err := tool.Invoke(ctx, tl.Handler, &tool.Call{ID: "c", Name: tl.Name, UserID: user, ThreadID: "t1"}, json.RawMessage(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			return res.TextContent(), res.IsError
		}
	}
	t.Fatalf("no tool %q in %d tools", name, len(tools))
	return "", false
}

// login runs Begin, follows the authorization URL as a browser would and
// hands the redirect to the flow.
func login(t *testing.T, a *mcpauthtest.Server, st mcpauth.Store, user string, scopes ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := mcpauth.Begin(ctx, mcpauth.LoginOptions{Store: st, Scopes: scopes}, user, serverEntry(a), "http://127.0.0.1:9/callback")
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if f.State == "" || !strings.HasPrefix(f.URL, a.Issuer()+"/authorize?") {
		t.Fatalf("authorization URL %q, state %q", f.URL, f.State)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(f.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		t.Fatalf("authorization endpoint: HTTP %d, no redirect", resp.StatusCode)
	}
	if err := f.Complete(loc.Query()); err != nil {
		t.Fatal(err)
	}
	if err := f.Wait(ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
}

func TestLogin_localAuthorizationServer(t *testing.T) {
	a := mcpauthtest.New(t)
	dir := t.TempDir()
	st := mcpauth.FileStore{Dir: dir}
	login(t, a, st, "alice")

	rec, err := st.Load(context.Background(), "alice", "remote")
	if err != nil || rec == nil {
		t.Fatalf("Load = %v, %v", rec, err)
	}
	if rec.ClientID != "client-1" || rec.TokenURL != a.Issuer()+"/token" || rec.URL != a.URL() || rec.RefreshToken == "" {
		t.Errorf("record %v", rec)
	}
	if diff := cmp.Diff([]string{"read"}, rec.Scopes); diff != "" {
		t.Errorf("scopes (from scopes_supported) (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(dir, "alice", "remote.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	// The record never shows its secrets.
	for _, s := range []string{rec.String(), fmtV(rec)} {
		if strings.Contains(s, rec.AccessToken) || strings.Contains(s, rec.RefreshToken) {
			t.Errorf("record formatted with a token: %s", s)
		}
	}

	// A running agent uses the stored token.
	m := newManager(t, a, &mcpauth.Stored{Store: st}, "alice")
	got, isErr := call(t, m, "alice", "whoami")
	if isErr || got != "whoami "+rec.AccessToken {
		t.Errorf("whoami = %q (error %v), want the stored token %q", got, isErr, rec.AccessToken)
	}
}

func TestLogin_serverThatDoesNotAsk(t *testing.T) {
	a := mcpauthtest.New(t)
	open := httptestMCP(t)
	srv := serverEntry(a)
	srv.URL = open
	_, err := mcpauth.Begin(context.Background(), mcpauth.LoginOptions{Store: mcpauth.FileStore{Dir: t.TempDir()}}, "alice", srv, "http://127.0.0.1:9/cb")
	if !errors.Is(err, mcpauth.ErrNotAsked) {
		t.Fatalf("Begin = %v, want ErrNotAsked", err)
	}
}

func TestStored_loginRequired(t *testing.T) {
	a := mcpauthtest.New(t)
	az := &mcpauth.Stored{Store: mcpauth.FileStore{Dir: t.TempDir()}, LoginHint: func(s, _ string, _ []string) string { return "run antler mcp login " + s }}
	m := newManager(t, a, az, "alice")
	got, isErr := call(t, m, "alice", "whoami")
	if !isErr || !strings.Contains(got, "MCP server 'remote' needs authorization for user 'alice': run antler mcp login remote") {
		t.Errorf("got %q (error %v), want the login hint", got, isErr)
	}
	if n, _ := a.Counts(); n != 0 {
		t.Errorf("%d authorization requests from a running agent, want none", n)
	}
}

func TestStored_refreshBeforeExpiry(t *testing.T) {
	tests := []struct {
		name        string
		expiresIn   time.Duration
		wantRefresh bool
	}{
		{"within the skew", 30 * time.Second, true},
		{"expired", -time.Minute, true},
		{"well before", time.Hour, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := mcpauthtest.New(t)
			st := mcpauth.FileStore{Dir: t.TempDir()}
			at, rt := a.Issue("read")
			old := &mcpauth.Record{URL: a.URL(), ClientID: "client-1", TokenURL: a.Issuer() + "/token",
				AccessToken: at, TokenType: "Bearer", RefreshToken: rt, Expiry: time.Now().Add(tc.expiresIn)}
			if err := st.Save(context.Background(), "alice", "remote", old); err != nil {
				t.Fatal(err)
			}
			m := newManager(t, a, &mcpauth.Stored{Store: st}, "alice")
			got, isErr := call(t, m, "alice", "whoami")
			_, grants := a.Counts()
			rec, _ := st.Load(context.Background(), "alice", "remote")
			if !tc.wantRefresh {
				if len(grants) != 0 || got != "whoami "+at || rec.AccessToken != at {
					t.Errorf("grants %v, whoami %q, stored %q: want the old token unrefreshed", grants, got, rec.AccessToken)
				}
				return
			}
			if diff := cmp.Diff([]string{"refresh_token"}, grants); diff != "" {
				t.Errorf("token requests (-want +got):\n%s", diff)
			}
			if isErr || got == "whoami "+at || got != "whoami "+rec.AccessToken {
				t.Errorf("whoami = %q (error %v); old token %q, stored %q: want the refreshed, stored token", got, isErr, at, rec.AccessToken)
			}
			if rec.RefreshToken == rt || !rec.Expiry.After(time.Now().Add(time.Minute)) {
				t.Errorf("stored record %v: want the rotated refresh token and the new expiry", rec)
			}
		})
	}
}

func TestStepUp(t *testing.T) {
	t.Run("interactive flow asks for the challenged scope", func(t *testing.T) {
		a := mcpauthtest.New(t)
		st := mcpauth.FileStore{Dir: t.TempDir()}
		az := &mcpauth.Interactive{Store: st, Fetch: mcpauth.AutoApprove(nil), RedirectURL: "http://127.0.0.1:9/cb"}
		m := newManager(t, a, az, "alice")
		got, isErr := call(t, m, "alice", "admin")
		if isErr || !strings.HasPrefix(got, "admin at-") {
			t.Fatalf("admin = %q (error %v)", got, isErr)
		}
		// A scope parameter is a set (RFC 6749 3.3), and the SDK unions
		// the granted and challenged scopes in map order: compare sorted.
		var scopes []string
		for _, q := range a.AuthorizeQueries() {
			scopes = append(scopes, strings.Join(slices.Sorted(slices.Values(strings.Fields(q.Get("scope")))), " "))
		}
		if diff := cmp.Diff([]string{"read", "admin read"}, scopes); diff != "" {
			t.Errorf("scopes of the authorization requests (-want +got):\n%s", diff)
		}
		rec, _ := st.Load(context.Background(), "alice", "remote")
		if diff := cmp.Diff([]string{"admin", "read"}, slices.Sorted(slices.Values(rec.Scopes))); diff != "" {
			t.Errorf("stored scopes (-want +got):\n%s", diff)
		}
	})
	t.Run("retry limit", func(t *testing.T) {
		a := mcpauthtest.New(t)
		a.AlwaysInsufficient = true
		az := &mcpauth.Interactive{Store: mcpauth.FileStore{Dir: t.TempDir()}, Fetch: mcpauth.AutoApprove(nil), RedirectURL: "http://127.0.0.1:9/cb"}
		m := newManager(t, a, az, "alice")
		got, isErr := call(t, m, "alice", "admin")
		if !isErr {
			t.Errorf("admin = %q, want an error", got)
		}
		if n, _ := a.Counts(); n != 2 {
			t.Errorf("%d authorization requests, want 2 (the login, one step-up)", n)
		}
	})
	t.Run("running agent is told to log in with the scope", func(t *testing.T) {
		a := mcpauthtest.New(t)
		st := mcpauth.FileStore{Dir: t.TempDir()}
		login(t, a, st, "alice")
		m := newManager(t, a, &mcpauth.Stored{Store: st, LoginHint: func(string, string, []string) string { return "log in again" }}, "alice")
		got, isErr := call(t, m, "alice", "admin")
		if !isErr || !strings.Contains(got, `needs more authorization (scope "read admin") for user 'alice'`) {
			t.Errorf("admin = %q (error %v)", got, isErr)
		}
		login(t, a, st, "alice", "admin")
		m2 := newManager(t, a, &mcpauth.Stored{Store: st}, "alice")
		if got, isErr := call(t, m2, "alice", "admin"); isErr {
			t.Errorf("after a login with the scope: admin = %q", got)
		}
	})
}

func TestTokensPerUser(t *testing.T) {
	a := mcpauthtest.New(t)
	st := mcpauth.FileStore{Dir: t.TempDir()}
	login(t, a, st, "alice")
	login(t, a, st, "bob")
	ra, _ := st.Load(context.Background(), "alice", "remote")
	rb, _ := st.Load(context.Background(), "bob", "remote")
	if ra.AccessToken == rb.AccessToken {
		t.Fatal("alice and bob were given the same token")
	}
	m := newManager(t, a, &mcpauth.Stored{Store: st, LoginHint: func(string, string, []string) string { return "log in" }}, "alice")
	tests := []struct {
		user      string
		want      string
		wantError bool
	}{
		{"alice", "whoami " + ra.AccessToken, false},
		{"bob", "whoami " + rb.AccessToken, false},
		{"", "whoami " + ra.AccessToken, false}, // no user: the control session's
		{"carol", "MCP server 'remote' needs authorization for user 'carol': log in", true},
	}
	for _, tc := range tests {
		got, isErr := call(t, m, tc.user, "whoami")
		if isErr != tc.wantError || !strings.Contains(got, tc.want) {
			t.Errorf("user %q: whoami = %q (error %v), want %q", tc.user, got, isErr, tc.want)
		}
	}
}

// TestStored_loginAfterDiscoveryFailed: a server whose discovery asked
// for a login is tried again at the next assembly, so that a login made
// meanwhile (the gateway's routes, while serve runs) takes effect without
// a cache reset.
func TestStored_loginAfterDiscoveryFailed(t *testing.T) {
	a := mcpauthtest.New(t)
	st := mcpauth.FileStore{Dir: t.TempDir()}
	m := newManager(t, a, &mcpauth.Stored{Store: st}, "alice")
	got, isErr := call(t, m, "alice", "whoami")
	if !isErr || !strings.Contains(got, "needs authorization for user 'alice'") {
		t.Fatalf("before the login: %q (error %v)", got, isErr)
	}
	login(t, a, st, "alice")
	rec, _ := st.Load(context.Background(), "alice", "remote")
	if got, isErr := call(t, m, "alice", "whoami"); isErr || got != "whoami "+rec.AccessToken {
		t.Errorf("after the login, same manager: %q (error %v), want the stored token", got, isErr)
	}
}

// emptyUserFiles gives every user an empty MCP file.
type emptyUserFiles struct{}

func (emptyUserFiles) Load(string) (*config.UserMCP, error) { return &config.UserMCP{}, nil }

// TestStored_discoveryPerUser: a shared server the process's user
// (AuthUser) has not logged in to is discovered, for a user who has, with
// that user's tokens: alice's runs get its tools and her token, bob's
// (no login) and the process's own get none.
func TestStored_discoveryPerUser(t *testing.T) {
	a := mcpauthtest.New(t)
	st := mcpauth.FileStore{Dir: t.TempDir()}
	login(t, a, st, "alice")
	rec, _ := st.Load(context.Background(), "alice", "remote")
	ext := &config.Extensions{MCPServers: map[string]config.MCPServer{"remote": serverEntry(a)}}
	m := mcptools.New(mcptools.Options{Extensions: mcptools.Static(ext), Authorizer: &mcpauth.Stored{Store: st},
		AuthUser: "default", UserFiles: emptyUserFiles{}})
	t.Cleanup(func() { m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	whoami := func(tools []*tool.Tool) *tool.Tool {
		for _, tl := range tools {
			if tl.Meta[mcptools.MetaTool] == "whoami" {
				return tl
			}
		}
		return nil
	}
	tests := []struct {
		user string
		want string // "" for no tool
	}{
		{"default", ""},
		{"alice", "whoami " + rec.AccessToken},
		{"bob", ""},
	}
	for _, tc := range tests {
		tools, err := m.ToolsFor(ctx, tc.user)
		if err != nil {
			t.Fatal(err)
		}
		tl := whoami(tools)
		if tc.want == "" {
			if tl != nil {
				t.Errorf("%s: got the tool of a server %s has not logged in to", tc.user, tc.user)
			}
			continue
		}
		if tl == nil {
			t.Fatalf("%s: no whoami tool in %d tools", tc.user, len(tools))
		}
		res, err := tool.Invoke(ctx, tl.Handler, &tool.Call{ID: "c", Name: tl.Name, UserID: tc.user, ThreadID: "t1"}, json.RawMessage(`{}`))
		if err != nil || res.TextContent() != tc.want {
			t.Errorf("%s: whoami = %v, %v; want %q", tc.user, res, err, tc.want)
		}
	}
}

// TestRevoke: the stored tokens are revoked at the authorization server
// (refresh and access token), which then refuses them.
func TestRevoke(t *testing.T) {
	a := mcpauthtest.New(t)
	st := mcpauth.FileStore{Dir: t.TempDir()}
	login(t, a, st, "alice")
	rec, _ := st.Load(context.Background(), "alice", "remote")
	if err := mcpauth.Revoke(context.Background(), mcpauth.Client{}, rec); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if n := a.Revoked(); n != 2 {
		t.Errorf("%d tokens revoked, want 2", n)
	}
	m := newManager(t, a, &mcpauth.Stored{Store: st}, "alice")
	if got, isErr := call(t, m, "alice", "whoami"); !isErr || !strings.Contains(got, "needs authorization") {
		t.Errorf("after the revocation: %q (error %v), want a login required", got, isErr)
	}
}

// TestStored_newLoginReachesOpenSession: a login made while a session is
// open (a step-up with more scope) is used by that session's next
// request: the refused request is retried with the stored login.
func TestStored_newLoginReachesOpenSession(t *testing.T) {
	a := mcpauthtest.New(t)
	st := mcpauth.FileStore{Dir: t.TempDir()}
	login(t, a, st, "alice")
	m := newManager(t, a, &mcpauth.Stored{Store: st}, "alice")
	if got, isErr := call(t, m, "alice", "admin"); !isErr || !strings.Contains(got, "needs more authorization") {
		t.Fatalf("admin with scope read: %q (error %v)", got, isErr)
	}
	login(t, a, st, "alice", "admin")
	rec, _ := st.Load(context.Background(), "alice", "remote")
	if got, isErr := call(t, m, "alice", "admin"); isErr || got != "admin "+rec.AccessToken {
		t.Errorf("admin after the step-up login, same session: %q (error %v), want the new token", got, isErr)
	}
}

// TestStored_expiredAndRevoked: a stored login whose access token expired
// and whose refresh token the server no longer accepts is a login
// required, not a bare HTTP error.
func TestStored_expiredAndRevoked(t *testing.T) {
	a := mcpauthtest.New(t)
	st := mcpauth.FileStore{Dir: t.TempDir()}
	old := &mcpauth.Record{URL: a.URL(), ClientID: "client-1", TokenURL: a.Issuer() + "/token",
		AccessToken: "at-unknown", TokenType: "Bearer", RefreshToken: "rt-unknown", Expiry: time.Now().Add(-time.Minute)}
	if err := st.Save(context.Background(), "alice", "remote", old); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, a, &mcpauth.Stored{Store: st, LoginHint: func(s, _ string, _ []string) string { return "log in to " + s }}, "alice")
	if got, isErr := call(t, m, "alice", "whoami"); !isErr || !strings.Contains(got, "needs authorization for user 'alice': log in to remote") {
		t.Errorf("got %q (error %v), want a login required", got, isErr)
	}
}
