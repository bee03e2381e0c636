package subagent_test

import (
	"slices"
	"testing"

	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/subagent"
)

// TestAuthz_subagentInheritsRoleFilter: a subagent of a guest's run binds
// none of the tools the guest's role may not use (the role comes from the
// parent's runtime context); another role's subagent keeps them.
func TestAuthz_subagentInheritsRoleFilter(t *testing.T) {
	az, err := authz.New(authz.Options{Config: config.Authorization{Enabled: true, FailClosed: true, DefaultRole: "user",
		Provider: &config.AuthorizationProvider{Use: config.RBACAuthorizationUse, Config: map[string]any{"roles": map[string]any{
			"user":  map[string]any{},
			"guest": map[string]any{"tools": map[string]any{"deny": []any{"web_search"}}},
		}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for role, wantWeb := range map[string]bool{"guest": false, "user": true} {
		worker := answers("done")
		h := newHarness(t, baseConfig, map[string]model.ChatModel{"worker": worker},
			func(o *subagent.Options) { o.Authorizer = az })
		var rec recorder
		rc := map[string]any{"model_name": "worker", "user_role": role}
		if _, err := h.callTask(t.Context(), &rec, rc, `{"description":"look","prompt":"look around","subagent_type":"general-purpose"}`); err != nil {
			t.Fatal(err)
		}
		got := modeltest.ToolNames(worker.Requests()[0])
		if slices.Contains(got, "web_search") != wantWeb || !slices.Contains(got, "ls") {
			t.Errorf("%s: subagent tools = %v", role, got)
		}
	}
}
