package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/gateway"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/mcptools/mcpauth"
	"github.com/antlerhq/antler/mcptools/mcpauth/mcpauthtest"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/toolset"
)

// mcpLoginEnv is a gateway with alice's and bob's tokens whose runs reach
// the MCP server "remote" of a (which asks for authorization) through a
// real mcptools.Manager authorized by the logins of store, discovering as
// alice (serve's --user), and whose login routes store into store.
func mcpLoginEnv(t *testing.T, a *mcpauthtest.Server, o gateway.MCPLoginOptions, chat model.ChatModel) (*env, mcpauth.FileStore) {
	t.Helper()
	return mcpLoginEnvAs(t, a, o, chat, "alice", nil)
}

// mcpLoginEnvAs is mcpLoginEnv with the manager discovering as authUser,
// with the users' MCP files files (nil: none).
func mcpLoginEnvAs(t *testing.T, a *mcpauthtest.Server, o gateway.MCPLoginOptions, chat model.ChatModel,
	authUser string, files mcptools.UserFiles) (*env, mcpauth.FileStore) {
	t.Helper()
	st := mcpauth.FileStore{Dir: filepath.Join(t.TempDir(), "mcp_oauth")}
	o.Store = st
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"remote": map[string]any{"enabled": true, "type": "http", "url": a.URL()}}})
	mgr := mcptools.New(mcptools.Options{Extensions: mcptools.Static(&config.Extensions{MCPServers: map[string]config.MCPServer{
		"remote": {Name: "remote", Enabled: true, Type: "http", URL: a.URL()}}}),
		Authorizer: &mcpauth.Stored{Store: st, LoginHint: func(s, u string, _ []string) string { return "log in to " + s + " as " + u }},
		AuthUser:   authUser, UserFiles: files})
	t.Cleanup(func() { mgr.Close() })
	e := newEnv(t, envOptions{model: chat, tokens: tokens(), mcp: mgr, extensions: string(ext),
		gateway: func(g *gateway.Options) { g.MCPLogin = o }})
	return e, st
}

// browse follows an authorization URL as a browser does: the
// authorization server redirects at once to the gateway's callback.
func browse(t *testing.T, authURL string) (int, string) {
	t.Helper()
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type loginStart struct {
	Server           string `json:"server"`
	AuthorizationURL string `json:"authorization_url"`
	RedirectURI      string `json:"redirect_uri"`
	ExpiresAt        string `json:"expires_at"`
}

// TestMCPLoginRoutes: the route pair logs the caller in (start returns the
// authorization URL, the callback stores the tokens for that caller only),
// the status and logout routes see only the caller's login, a state is
// used once, and the pending logins are bounded.
func TestMCPLoginRoutes(t *testing.T) {
	a := mcpauthtest.New(t)
	e, st := mcpLoginEnv(t, a, gateway.MCPLoginOptions{MaxPending: 1}, nil)

	var start loginStart
	e.json("POST", "/api/mcp/oauth/remote/start", aliceToken, nil, 200, &start)
	if start.Server != "remote" || start.RedirectURI != e.url+"/api/mcp/oauth/callback" || start.ExpiresAt == "" ||
		!strings.HasPrefix(start.AuthorizationURL, a.Issuer()+"/authorize?") {
		t.Fatalf("start = %+v", start)
	}
	// One pending login at most (MaxPending 1): bob waits.
	if code := e.status("POST", "/api/mcp/oauth/remote/start", bobToken, nil); code != http.StatusTooManyRequests {
		t.Errorf("a second pending login: status %d, want 429", code)
	}
	code, page := browse(t, start.AuthorizationURL)
	if code != 200 || !strings.Contains(page, "Logged in to MCP server &#39;remote&#39;") {
		t.Fatalf("callback: %d %s", code, page)
	}
	alice, _ := st.Load(t.Context(), "alice", "remote")
	bob, _ := st.Load(t.Context(), "bob", "remote")
	if alice == nil || alice.AccessToken == "" || bob != nil {
		t.Fatalf("stored: alice %v, bob %v; want alice's only", alice, bob)
	}
	// The state is used once: the same redirect again is refused.
	if code, _ := browse(t, start.AuthorizationURL); code != http.StatusBadRequest {
		t.Errorf("a replayed state: status %d, want 400", code)
	}
	if code, _ := browse(t, e.url+"/api/mcp/oauth/callback?code=x&state=forged"); code != http.StatusBadRequest {
		t.Errorf("an unknown state: status %d, want 400", code)
	}

	var status map[string]any
	e.json("GET", "/api/mcp/oauth/remote/status", aliceToken, nil, 200, &status)
	if status["logged_in"] != true || status["refreshable"] != true {
		t.Errorf("alice's status = %v", status)
	}
	b, _ := json.Marshal(status)
	if strings.Contains(string(b), alice.AccessToken) || strings.Contains(string(b), alice.RefreshToken) {
		t.Errorf("the status shows a token: %s", b)
	}
	e.json("GET", "/api/mcp/oauth/remote/status", bobToken, nil, 200, &status)
	if status["logged_in"] != false {
		t.Errorf("bob's status = %v, want not logged in", status)
	}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"POST", "/api/mcp/oauth/nope/start", 404},
		{"GET", "/api/mcp/oauth/nope/status", 404},
		{"POST", "/api/mcp/oauth/remote/start", 401}, // no bearer token
	} {
		token := aliceToken
		if tc.want == 401 {
			token = ""
		}
		if code := e.status(tc.method, tc.path, token, nil); code != tc.want {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, code, tc.want)
		}
	}

	// bob's logout does not touch alice's login; alice's does.
	var out map[string]any
	e.json("DELETE", "/api/mcp/oauth/remote", bobToken, nil, 200, &out)
	if out["logged_out"] != false {
		t.Errorf("bob's logout = %v", out)
	}
	if rec, _ := st.Load(t.Context(), "alice", "remote"); rec == nil {
		t.Fatal("bob's logout deleted alice's login")
	}
	e.json("DELETE", "/api/mcp/oauth/remote", aliceToken, nil, 200, &out)
	if rec, _ := st.Load(t.Context(), "alice", "remote"); out["logged_out"] != true || out["revoked"] != true || rec != nil {
		t.Errorf("alice's logout = %v, stored %v", out, rec)
	}
}

func TestMCPLoginRoutes_off(t *testing.T) {
	e := newEnv(t, envOptions{})
	if code := e.status("POST", "/api/mcp/oauth/remote/start", "", nil); code != http.StatusNotImplemented {
		t.Errorf("start without a store: status %d, want 501", code)
	}
}

// TestMCPLogin_tokensPerUser: after alice logs in through the gateway,
// her run's call carries her token, and bob's run (no login) gets an
// error result that tells him to log in, never alice's token.
func TestMCPLogin_tokensPerUser(t *testing.T) {
	a := mcpauthtest.New(t)
	call := modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "call_1", Name: "whoami", Arguments: json.RawMessage(`{}`)}}}
	answer := modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
		return modeltest.Turn{Text: "Result: " + modeltest.LastMessage(req).Content}
	}}
	chat := modeltest.New(call, answer, call, answer)
	e, st := mcpLoginEnv(t, a, gateway.MCPLoginOptions{}, chat)

	var start loginStart
	e.json("POST", "/api/mcp/oauth/remote/start", aliceToken, nil, 200, &start)
	if code, page := browse(t, start.AuthorizationURL); code != 200 {
		t.Fatalf("callback: %d %s", code, page)
	}
	alice, _ := st.Load(t.Context(), "alice", "remote")
	if alice == nil {
		t.Fatal("alice's login was not stored")
	}

	tests := []struct {
		name, token, want, never string
	}{
		{"alice", aliceToken, "whoami " + alice.AccessToken, ""},
		{"bob", bobToken, "MCP server 'remote' needs authorization for user 'bob': log in to remote as bob", alice.AccessToken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tid := uuid.NewString()
			resp := e.startStream(tid, tc.token, runBody(tid, humanInput("who am I?", nil)))
			tr, err := readAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			var tool string
			for _, m := range tr.Messages {
				if m["type"] == "tool" {
					tool, _ = m["content"].(string)
				}
			}
			if !strings.Contains(tool, tc.want) || (tc.never != "" && strings.Contains(tool, tc.never)) {
				t.Errorf("tool result %q, want %q", tool, tc.want)
			}
		})
	}
}

// TestMCPLoginRoutes_usersOwnServer: a server of the caller's own MCP
// file can be logged in to by the caller, and is unknown to another user.
func TestMCPLoginRoutes_usersOwnServer(t *testing.T) {
	a := mcpauthtest.New(t)
	files := &config.UserMCPFiles{}
	st := mcpauth.FileStore{Dir: filepath.Join(t.TempDir(), "mcp_oauth")}
	e := newEnv(t, envOptions{tokens: tokens(), gateway: func(o *gateway.Options) {
		files.Dir = o.Layout.UserDir
		o.UserMCP = files
		o.MCPLogin = gateway.MCPLoginOptions{Store: st}
	}})
	p, err := files.Path("alice")
	if err != nil {
		t.Fatal(err)
	}
	own, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"mine": map[string]any{"type": "http", "url": a.URL()}}})
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, own, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := e.status("POST", "/api/mcp/oauth/mine/start", bobToken, nil); code != http.StatusNotFound {
		t.Errorf("bob starting a login to alice's server: status %d, want 404", code)
	}
	var start loginStart
	e.json("POST", "/api/mcp/oauth/mine/start", aliceToken, nil, 200, &start)
	if code, page := browse(t, start.AuthorizationURL); code != 200 {
		t.Fatalf("callback: %d %s", code, page)
	}
	if rec, _ := st.Load(t.Context(), "alice", "mine"); rec == nil || rec.URL != a.URL() {
		t.Errorf("alice's login to her own server: stored %v", rec)
	}
}

// noUserFiles gives every user an empty MCP file.
type noUserFiles struct{}

func (noUserFiles) Load(string) (*config.UserMCP, error) { return &config.UserMCP{}, nil }

// TestMCPLogin_discoveryPerUser: the process's user (serve's --user,
// "default" here) never logged in; alice logs in through the routes and
// her next run has the server's tool with her token, while bob's run does
// not have it.
func TestMCPLogin_discoveryPerUser(t *testing.T) {
	a := mcpauthtest.New(t)
	call := modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "call_1", Name: "whoami", Arguments: json.RawMessage(`{}`)}}}
	answer := modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
		return modeltest.Turn{Text: "Result: " + modeltest.LastMessage(req).Content}
	}}
	e, st := mcpLoginEnvAs(t, a, gateway.MCPLoginOptions{}, modeltest.New(call, answer, call, answer), "default", noUserFiles{})
	var start loginStart
	e.json("POST", "/api/mcp/oauth/remote/start", aliceToken, nil, 200, &start)
	if code, page := browse(t, start.AuthorizationURL); code != 200 {
		t.Fatalf("callback: %d %s", code, page)
	}
	alice, _ := st.Load(t.Context(), "alice", "remote")
	if alice == nil {
		t.Fatal("alice's login was not stored")
	}
	for _, tc := range []struct{ name, token, want string }{
		{"alice", aliceToken, "whoami " + alice.AccessToken},
		{"bob", bobToken, "whoami is not a valid tool"},
	} {
		tid := uuid.NewString()
		resp := e.startStream(tid, tc.token, runBody(tid, humanInput("who am I?", nil)))
		tr, err := readAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, m := range tr.Messages {
			if m["type"] == "tool" {
				got, _ = m["content"].(string)
			}
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: tool result %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestMCPLoginRoutes_redirectURL: a configured redirect URL is the one
// registered and sent; one that is not an absolute http(s) URL is
// refused by New.
func TestMCPLoginRoutes_redirectURL(t *testing.T) {
	a := mcpauthtest.New(t)
	e, _ := mcpLoginEnv(t, a, gateway.MCPLoginOptions{RedirectURL: "https://chat.example/api/mcp/oauth/callback"}, nil)
	var start loginStart
	e.json("POST", "/api/mcp/oauth/remote/start", aliceToken, nil, 200, &start)
	if start.RedirectURI != "https://chat.example/api/mcp/oauth/callback" || !strings.Contains(start.AuthorizationURL, "redirect_uri=https%3A%2F%2Fchat.example%2Fapi%2Fmcp%2Foauth%2Fcallback") {
		t.Errorf("start = %+v", start)
	}
	_, err := gateway.New(gateway.Options{Config: &config.Config{}, Store: e.store, Layout: e.layout,
		Factory: agent.FactoryOptions{Assembler: &toolset.Assembler{}}, MCPLogin: gateway.MCPLoginOptions{RedirectURL: "/relative"}})
	if err == nil || !strings.Contains(err.Error(), `redirect URL "/relative" is not an absolute http(s) URL`) {
		t.Errorf("New with a relative redirect URL: %v", err)
	}
}
