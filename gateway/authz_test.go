package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model/modeltest"
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
