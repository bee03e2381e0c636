package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/mcptools/mcpauth"
	"github.com/antlerhq/antler/mcptools/mcpauth/mcpauthtest"
)

// mcpLoginConfig writes a config and an extensions file with the server
// "remote" of a, and returns the config's path and the home.
func mcpLoginConfig(t *testing.T, a *mcpauthtest.Server) (cfg, home string) {
	t.Helper()
	dir := t.TempDir()
	cfg = writeFile(t, dir, "config.yaml", "models: []\nsandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n")
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"remote": map[string]any{"enabled": true, "type": "http", "url": a.URL()}}})
	writeFile(t, dir, "extensions_config.json", string(ext))
	return cfg, filepath.Join(dir, "home")
}

// loginResult is what `antler mcp login` left: its exit code and output,
// and the page the browser was shown.
type loginResult struct {
	code              int
	out, errOut, page string
}

// cliLogin runs `antler mcp login server` for user, and, once it printed
// the authorization URL, follows it as a browser does (the authorization
// server redirects at once to the loopback callback). With cancel, it
// cancels the command (Ctrl-C) instead of following the URL.
func cliLogin(t *testing.T, cfg, home, user, server string, cancel bool, extra ...string) loginResult {
	t.Helper()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	pr, pw := io.Pipe()
	var errOut strings.Builder
	done := make(chan int, 1)
	go func() {
		defer pw.Close()
		args := append([]string{"--config", cfg, "--home", home, "--user", user, "mcp", "login", server, "--timeout", "1m"}, extra...)
		done <- Main(ctx, args,
			Options{Stdout: pw, Stderr: &errOut, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }})
	}()
	var out strings.Builder
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if u, ok := strings.CutPrefix(sc.Text(), "  http"); ok {
				urls <- "http" + u
			}
		}
		close(urls)
	}()
	var res loginResult
	select {
	case u, ok := <-urls:
		if !ok {
			break
		}
		if cancel {
			stop()
			break
		}
		resp, err := http.Get(u) // follows the redirect to the loopback callback
		if err != nil {
			t.Fatalf("following the authorization URL: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res.page = string(b)
	case <-time.After(time.Minute):
		t.Fatal("mcp login printed no authorization URL")
	}
	res.code = <-done
	for range urls { // the scanner has read everything
	}
	res.out, res.errOut = out.String(), errOut.String()
	return res
}

func TestMCPLogin_localAuthorizationServer(t *testing.T) {
	a := mcpauthtest.New(t)
	cfg, home := mcpLoginConfig(t, a)
	res := cliLogin(t, cfg, home, "alice", "remote", false)
	if res.code != 0 || !strings.Contains(res.out, "Logged in to MCP server 'remote' as user 'alice' (expires in ") {
		t.Fatalf("mcp login: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.out, res.errOut)
	}
	if !strings.Contains(res.page, "Logged in to MCP server &#39;remote&#39;") {
		t.Errorf("the browser was shown %q", res.page)
	}
	if q := a.AuthorizeQueries(); len(q) != 1 || !strings.HasPrefix(q[0].Get("redirect_uri"), "http://127.0.0.1:") {
		t.Errorf("authorization requests %v: want one, redirecting to 127.0.0.1", q)
	}

	p := filepath.Join(home, "mcp_oauth", "alice", "remote.json")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(p)); di.Mode().Perm() != 0o700 {
		t.Errorf("%s: mode %v, want 0700", filepath.Dir(p), di.Mode().Perm())
	}
	rec, err := mcpauth.FileStore{Dir: filepath.Join(home, "mcp_oauth")}.Load(t.Context(), "alice", "remote")
	if err != nil || rec == nil || rec.AccessToken == "" || rec.RefreshToken == "" {
		t.Fatalf("stored record %v, %v", rec, err)
	}

	// get and list show the login, never the token.
	code, getOut, getErr := runCLI(t, nil, "--config", cfg, "--home", home, "--user", "alice", "mcp", "get", "remote")
	if code != 0 || !strings.Contains(getOut, "auth:        ✔ logged in as 'alice' (expires in ") || !strings.Contains(getOut, "remote_whoami") {
		t.Errorf("mcp get: exit %d\n%s\n%s", code, getOut, getErr)
	}
	code, listOut, listErr := runCLI(t, nil, "--config", cfg, "--home", home, "--user", "bob", "mcp", "list", "--width", "200")
	if code != 0 || !strings.Contains(listOut, "✗ login required") || !strings.Contains(listOut, "`antler mcp login remote --user bob`") {
		t.Errorf("mcp list as bob: exit %d\n%s\n%s", code, listOut, listErr)
	}
	for _, s := range []string{res.out, res.errOut, res.page, getOut, getErr, listOut, listErr} {
		if strings.Contains(s, rec.AccessToken) || strings.Contains(s, rec.RefreshToken) {
			t.Errorf("a token was shown:\n%s", s)
		}
	}

	// logout deletes the file.
	code, out, _ := runCLI(t, nil, "--config", cfg, "--home", home, "--user", "alice", "mcp", "logout", "remote")
	if code != 0 || !strings.Contains(out, "Logged out of MCP server 'remote' (user 'alice'): its tokens are revoked and deleted.") || a.Revoked() != 2 {
		t.Errorf("mcp logout: exit %d: %s", code, out)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("after logout: %v, want the file gone", err)
	}
}

func TestMCPLogin_ctrlCCancels(t *testing.T) {
	a := mcpauthtest.New(t)
	cfg, home := mcpLoginConfig(t, a)
	res := cliLogin(t, cfg, home, "alice", "remote", true)
	if res.code != 1 || !strings.Contains(res.errOut, "login to MCP server 'remote' cancelled") {
		t.Errorf("mcp login cancelled: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.out, res.errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "mcp_oauth", "alice", "remote.json")); !os.IsNotExist(err) {
		t.Errorf("a cancelled login stored tokens: %v", err)
	}
}

func TestMCPLogin_refusals(t *testing.T) {
	a := mcpauthtest.New(t)
	cfg, home := mcpLoginConfig(t, a)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown server", []string{"mcp", "login", "nope"}, `mcpServers has no server "nope"`},
		{"bad user", []string{"--user", "../x", "mcp", "login", "remote"}, `--user: "../x" is not a valid user id`},
		{"bad port", []string{"mcp", "login", "remote", "--port", "70000"}, "--port 70000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, nil, append([]string{"--config", cfg, "--home", home}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

// saveLogin stores a login of user to "remote" as `mcp login` would,
// with tokens a issued and the given expiry.
func saveLogin(t *testing.T, a *mcpauthtest.Server, home, user string, expiry time.Time) *mcpauth.Record {
	t.Helper()
	at, rt := a.Issue("read")
	rec := &mcpauth.Record{URL: a.URL(), ClientID: "client-1", TokenURL: a.Issuer() + "/token",
		AccessToken: at, TokenType: "Bearer", RefreshToken: rt, Expiry: expiry}
	if err := (mcpauth.FileStore{Dir: filepath.Join(home, "mcp_oauth")}).Save(t.Context(), user, "remote", rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestMCPStoredLogin_runUsesUsersTokens: a command that runs tools (tools
// call, the path of run and chat) sends --user's stored token, and each
// user's own; a user without a login is told how to log in (discovery
// runs as --user, so the server's tools are left out with that warning).
func TestMCPStoredLogin_runUsesUsersTokens(t *testing.T) {
	a := mcpauthtest.New(t)
	cfg, home := mcpLoginConfig(t, a)
	alice := saveLogin(t, a, home, "alice", time.Now().Add(time.Hour))
	bob := saveLogin(t, a, home, "bob", time.Now().Add(time.Hour))
	tests := []struct {
		user     string
		wantCode int
		want     string
	}{
		{"alice", 0, "whoami " + alice.AccessToken},
		{"bob", 0, "whoami " + bob.AccessToken},
		{"carol", 2, "MCP server 'remote' needs authorization for user 'carol': run `antler mcp login remote --user carol`"},
	}
	for _, tc := range tests {
		t.Run(tc.user, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "--user", tc.user, "tools", "call", "remote_whoami", "--args", "{}")
			if code != tc.wantCode || !strings.Contains(out+errOut, tc.want) {
				t.Errorf("exit %d\nstdout: %s\nstderr: %s\nwant exit %d and %q", code, out, errOut, tc.wantCode, tc.want)
			}
		})
	}
}

// TestMCPStoredLogin_refreshBeforeExpiry: a stored token within a minute
// of its expiry is refreshed before the call, and the new one is stored.
func TestMCPStoredLogin_refreshBeforeExpiry(t *testing.T) {
	a := mcpauthtest.New(t)
	cfg, home := mcpLoginConfig(t, a)
	old := saveLogin(t, a, home, "alice", time.Now().Add(30*time.Second))
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "--user", "alice", "tools", "call", "remote_whoami", "--args", "{}")
	if code != 0 {
		t.Fatalf("tools call: exit %d\n%s\n%s", code, out, errOut)
	}
	rec, err := mcpauth.FileStore{Dir: filepath.Join(home, "mcp_oauth")}.Load(t.Context(), "alice", "remote")
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	if rec.AccessToken == old.AccessToken || rec.RefreshToken == old.RefreshToken || !rec.Expiry.After(time.Now().Add(time.Minute)) {
		t.Errorf("stored %v: want a refreshed token, a rotated refresh token and a later expiry", rec)
	}
	if !strings.Contains(out, "whoami "+rec.AccessToken) {
		t.Errorf("the call used %q, want the refreshed token", out)
	}
	if _, grants := a.Counts(); len(grants) != 1 || grants[0] != "refresh_token" {
		t.Errorf("token requests %v, want one refresh", grants)
	}
}

// TestMCPLogin_stepUp: a tool that needs a scope the login did not get
// fails with a result naming the scope and the login command with
// --scope; a login with that scope makes the call pass.
func TestMCPLogin_stepUp(t *testing.T) {
	a := mcpauthtest.New(t)
	cfg, home := mcpLoginConfig(t, a)
	if res := cliLogin(t, cfg, home, "alice", "remote", false); res.code != 0 {
		t.Fatalf("mcp login: exit %d: %s", res.code, res.errOut)
	}
	admin := func() (int, string) {
		code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "--user", "alice", "tools", "call", "remote_admin", "--args", "{}")
		return code, out + errOut
	}
	code, out := admin()
	want := `MCP server 'remote' needs more authorization (scope "read admin") for user 'alice': run ` +
		"`antler mcp login remote --user alice --scope read --scope admin`"
	if code != 1 || !strings.Contains(out, want) {
		t.Fatalf("admin before the step-up: exit %d\n%s\nwant exit 1 and %q", code, out, want)
	}
	if res := cliLogin(t, cfg, home, "alice", "remote", false, "--scope", "admin"); res.code != 0 {
		t.Fatalf("mcp login --scope admin: exit %d: %s", res.code, res.errOut)
	}
	q := a.AuthorizeQueries()
	if got := strings.Fields(q[len(q)-1].Get("scope")); !slices.Contains(got, "read") || !slices.Contains(got, "admin") {
		t.Errorf("the step-up login asked for scope %q, want read and admin", got)
	}
	if code, out := admin(); code != 0 || !strings.Contains(out, "admin at-") {
		t.Errorf("admin after the step-up: exit %d\n%s", code, out)
	}
}

// TestMCPLogin_usersOwnServer: a server of --user's own MCP file (antler
// mcp add --user) is logged in to like a shared one.
func TestMCPLogin_usersOwnServer(t *testing.T) {
	a := mcpauthtest.New(t)
	cfg, home := mcpLoginConfig(t, a)
	if code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "--user", "alice", "mcp", "add", "-t", "http", "mine", a.URL()); code != 0 {
		t.Fatalf("mcp add --user alice: exit %d: %s %s", code, out, errOut)
	}
	if res := cliLogin(t, cfg, home, "alice", "mine", false); res.code != 0 {
		t.Fatalf("mcp login mine: exit %d\n%s\n%s", res.code, res.out, res.errOut)
	}
	if rec, _ := (mcpauth.FileStore{Dir: filepath.Join(home, "mcp_oauth")}).Load(t.Context(), "alice", "mine"); rec == nil || rec.URL != a.URL() {
		t.Errorf("stored %v", rec)
	}
	if code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "--user", "bob", "mcp", "login", "mine"); code != 2 || !strings.Contains(errOut, `no server "mine"`) {
		t.Errorf("bob's login to alice's server: exit %d: %s", code, errOut)
	}
}

// TestMCPGet_authorizationCodeBlock: a server with an authorization_code
// oauth block shows the pre-registered client (secret masked) and that a
// login is needed before one is stored.
func TestMCPGet_authorizationCodeBlock(t *testing.T) {
	a := mcpauthtest.New(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "models: []\n")
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"remote": map[string]any{"enabled": true, "type": "http", "url": a.URL(),
		"oauth": map[string]any{"enabled": true, "grant_type": "authorization_code", "client_id": "pre-1", "client_secret": "pre-secret-value"}}}})
	writeFile(t, dir, "extensions_config.json", string(ext))
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", filepath.Join(dir, "home"), "mcp", "get", "remote")
	for _, want := range []string{"oauth:       authorization_code (a login per user), client_id pre-1, client_secret ****",
		"auth:        ✗ login required: run `antler mcp login remote`"} {
		if !strings.Contains(out, want) {
			t.Errorf("mcp get: missing %q in\n%s", want, out)
		}
	}
	if code != 0 || strings.Contains(out+errOut, "pre-secret-value") {
		t.Errorf("mcp get: exit %d, or the secret shown:\n%s\n%s", code, out, errOut)
	}
}

// TestServeMCPLogin: `antler serve` wires the gateway's login routes to
// the token files its runs read: before the login the server's tools are
// missing, a login through start and callback stores the default user's
// tokens (0600), and the next listing has the tools without a restart.
func TestServeMCPLogin(t *testing.T) {
	a := mcpauthtest.New(t)
	cfg, home := mcpLoginConfig(t, a)
	url, stop := startServe(t, nil, "--config", cfg, "--home", home)
	defer stop()
	toolNames := func() string {
		resp, err := http.Get(url + "/api/tools")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := toolNames(); strings.Contains(got, "remote_whoami") {
		t.Fatalf("tools before the login: %s", got)
	}
	resp, err := http.Post(url+"/api/mcp/oauth/remote/start", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	var start struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	json.NewDecoder(resp.Body).Decode(&start)
	resp.Body.Close()
	if resp.StatusCode != 200 || start.AuthorizationURL == "" {
		t.Fatalf("start: status %d, %+v", resp.StatusCode, start)
	}
	page, err := http.Get(start.AuthorizationURL)
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != 200 {
		t.Fatalf("callback: status %d", page.StatusCode)
	}
	fi, err := os.Stat(filepath.Join(home, "mcp_oauth", "default", "remote.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v", fi, err)
	}
	if got := toolNames(); !strings.Contains(got, "remote_whoami") {
		t.Errorf("tools after the login: %s", got)
	}
}
