package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/gateway"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/toolset"
	"github.com/antlerhq/antler/vpath"
)

// authzSection gives the guest role only read routes and run creation
// and no model; the member role may not bind make_report.
const authzSection = `
authorization:
  enabled: true
  provider:
    use: deerflow.authz.rbac:RbacAuthorizationProvider
    config:
      roles:
        admin:  {tools: {allow: "*"}}
        user:   {tools: {allow: "*"}}
        member: {tools: {allow: "*", deny: [make_report]}}
        guest:
          models: {allow: []}
          routes: {allow: ["threads:read", "runs:create", "runs:read"]}
`

// newAuthzEnv is a gateway with alice (admin), bob (guest) and carol
// (member).
func newAuthzEnv(t *testing.T, m *modeltest.Model) *env {
	t.Helper()
	full, err := config.Parse("config.yaml", []byte(authzSection), nil)
	if err != nil {
		t.Fatal(err)
	}
	az, err := authz.New(authz.Options{Config: full.Authorization})
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, envOptions{model: m, authz: az, config: authzSection, tokens: []config.GatewayToken{
		{Token: "tok-alice", UserID: "alice", Admin: true}, {Token: "tok-bob", UserID: "bob", Role: "guest"},
		{Token: "tok-carol", UserID: "carol", Role: "member"}}})
}

func errDetail(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var body struct {
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("not a JSON error body: %s", data)
	}
	return body.Detail
}

// TestAuthz_routePermissionDenied403: a role without threads:delete gets
// DeerFlow's 403 {"detail": "Permission denied: threads:delete"}; the
// admin deletes; reading stays open to the guest.
func TestAuthz_routePermissionDenied403(t *testing.T) {
	e := newAuthzEnv(t, nil)
	e.json("POST", "/api/threads", "tok-bob", map[string]any{"thread_id": "tb"}, 200, nil)
	resp := e.do("DELETE", "/api/threads/tb", "tok-bob", nil)
	if resp.StatusCode != http.StatusForbidden || errDetail(t, resp) != "Permission denied: threads:delete" {
		t.Fatalf("guest delete: status %d", resp.StatusCode)
	}
	if got := e.status("GET", "/api/threads/tb", "tok-bob", nil); got != http.StatusOK {
		t.Errorf("guest read: status %d", got)
	}
	e.json("POST", "/api/threads", "tok-alice", map[string]any{"thread_id": "ta"}, 200, nil)
	if got := e.status("DELETE", "/api/threads/ta", "tok-alice", nil); got == http.StatusForbidden {
		t.Errorf("admin delete: status %d", got)
	}
}

// TestAuthz_modelDenied403: a run choosing a model the role may not use is
// refused with 403 before anything runs; the role's model list and GET
// /api/models/{name} agree.
func TestAuthz_modelDenied403(t *testing.T) {
	m := modeltest.New(modeltest.Turn{Text: "hello"})
	e := newAuthzEnv(t, m)
	e.json("POST", "/api/threads", "tok-bob", map[string]any{"thread_id": "tm"}, 200, nil)
	resp := e.do("POST", "/api/threads/tm/runs/stream", "tok-bob", runBody("tm", humanInput("hi", nil)))
	if resp.StatusCode != http.StatusForbidden || errDetail(t, resp) != "Model 'test-model' is not available for your role" {
		t.Fatalf("denied model: status %d", resp.StatusCode)
	}
	if m.Calls() != 0 {
		t.Errorf("the model was called %d times", m.Calls())
	}
	var list struct {
		Models []struct{ Name string } `json:"models"`
	}
	e.json("GET", "/api/models", "tok-bob", nil, 200, &list)
	var names []string
	for _, mm := range list.Models {
		names = append(names, mm.Name)
	}
	if diff := cmp.Diff([]string(nil), names); diff != "" {
		t.Errorf("guest models (-want +got):\n%s", diff)
	}
	if got := e.status("GET", "/api/models/test-model", "tok-bob", nil); got != http.StatusForbidden {
		t.Errorf("GET test-model as guest: %d", got)
	}
	if got := e.status("GET", "/api/models/test-model", "tok-alice", nil); got != http.StatusOK {
		t.Errorf("GET test-model as admin: %d", got)
	}
	if got := e.status("GET", "/api/models/nope", "tok-alice", nil); got != http.StatusNotFound {
		t.Errorf("GET unknown model: %d", got)
	}
}

// TestAuthz_tokenRoleWinsOverClientContext: a member's run binds no tool
// the role denies, even when the request's context claims another role.
func TestAuthz_tokenRoleWinsOverClientContext(t *testing.T) {
	m := modeltest.New(modeltest.Turn{Text: "hello"})
	e := newAuthzEnv(t, m)
	e.json("POST", "/api/threads", "tok-carol", map[string]any{"thread_id": "tc"}, 200, nil)
	body := runBody("tc", humanInput("hi", nil))
	body["context"].(map[string]any)["user_role"] = "admin"
	resp := e.startStream("tc", "tok-carol", body)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if sent := modeltest.ToolNames(m.LastRequest()); slices.Contains(sent, "make_report") || len(sent) == 0 {
		t.Errorf("member model request tools = %v", sent)
	}
}

// TestAuthz_roleAdminIsAdmin: a token entry with role: admin manages
// process-wide settings like admin: true; another role does not (DeerFlow's
// admin-only management routes).
func TestAuthz_roleAdminIsAdmin(t *testing.T) {
	e := newEnv(t, envOptions{tokens: []config.GatewayToken{
		{Token: "tok-root", UserID: "root", Role: "admin"}, {Token: "tok-bob", UserID: "bob", Role: "guest"}}})
	if got := e.status("GET", "/api/mcp/config", "tok-root", nil); got != http.StatusOK {
		t.Errorf("role admin: GET /api/mcp/config = %d", got)
	}
	if got := e.status("GET", "/api/mcp/config", "tok-bob", nil); got != http.StatusForbidden {
		t.Errorf("role guest: GET /api/mcp/config = %d", got)
	}
}

// TestAuthz_undefinedRolesRefusedAtNew: with RBAC on, a token role the
// roles do not define, or a gateway without tokens (its one user is the
// admin role) whose roles lack admin, is refused when the server is made.
func TestAuthz_undefinedRolesRefusedAtNew(t *testing.T) {
	az, err := authz.New(authz.Options{Config: config.Authorization{Enabled: true, FailClosed: true, DefaultRole: "user",
		Provider: &config.AuthorizationProvider{Use: config.RBACAuthorizationUse,
			Config: map[string]any{"roles": map[string]any{"user": map[string]any{}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cfg, err := config.Parse("config.yaml", []byte(testConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.OpenDir(home, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	layout, err := vpath.New(vpath.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	base := gateway.Options{Config: cfg, Store: st, Layout: layout, Authorizer: az,
		Factory: agent.FactoryOptions{Assembler: &toolset.Assembler{Registry: toolset.NewRegistry(), Env: &toolset.Env{Config: cfg}}}}
	cases := map[string]struct {
		tokens []config.GatewayToken
		want   string
	}{
		"no tokens":          {nil, "the role of a gateway without tokens 'admin' is not defined"},
		"unknown token role": {[]config.GatewayToken{{Token: "t", UserID: "bob", Role: "editor"}}, "gateway.tokens[0].role 'editor' is not defined"},
		"admin with a role":  {[]config.GatewayToken{{Token: "t", UserID: "bob", Admin: true, Role: "user"}}, "contradicts admin: true"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := base
			o.Tokens = tc.tokens
			if _, err := gateway.New(o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want %q", err, tc.want)
			}
		})
	}
	o := base
	o.Tokens = []config.GatewayToken{{Token: "t", UserID: "bob"}}
	gw, err := gateway.New(o)
	if err != nil {
		t.Fatalf("defined roles: %v", err)
	}
	gw.Close()
}

// failingProvider fails every question.
type failingProvider struct{}

func (failingProvider) Name() string { return "failing" }
func (failingProvider) Authorize(context.Context, authz.Request) (authz.Decision, error) {
	return authz.Decision{}, errors.New("policy service down")
}
func (failingProvider) FilterResources(context.Context, authz.Principal, string, []string) ([]string, error) {
	return nil, errors.New("policy service down")
}

// TestAuthz_providerFailure: when the provider fails, fail_closed denies
// the route (403) and lists no model; fail_closed: false lets both through.
func TestAuthz_providerFailure(t *testing.T) {
	for _, failClosed := range []bool{true, false} {
		az, err := authz.New(authz.Options{Config: config.Authorization{Enabled: true, FailClosed: failClosed, DefaultRole: "user",
			Provider: &config.AuthorizationProvider{Use: "corp:Policy"}},
			Providers: map[string]authz.Factory{"corp:Policy": func(map[string]any) (authz.Provider, error) { return failingProvider{}, nil }}})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, envOptions{authz: az, tokens: []config.GatewayToken{{Token: "tok", UserID: "u1"}}})
		e.json("POST", "/api/threads", "tok", map[string]any{"thread_id": "tf"}, 200, nil)
		wantStatus, wantModels := http.StatusForbidden, 0
		if !failClosed {
			wantStatus, wantModels = http.StatusOK, 1
		}
		if got := e.status("GET", "/api/threads/tf", "tok", nil); got != wantStatus {
			t.Errorf("fail_closed %v: GET thread = %d, want %d", failClosed, got, wantStatus)
		}
		var list struct {
			Models []any `json:"models"`
		}
		e.json("GET", "/api/models", "tok", nil, 200, &list)
		if len(list.Models) != wantModels {
			t.Errorf("fail_closed %v: %d models listed, want %d", failClosed, len(list.Models), wantModels)
		}
	}
}
