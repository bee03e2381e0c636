package authz

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// TestAuthorizer_refusesPoliciesNothingAsksAbout: the built-in RBAC
// provider's roles may hold tools, models, routes and mcp_servers
// policies; a policy for any other resource type (DeerFlow accepts skills,
// sandbox or a custom key and never asks about them) is a config error
// naming the role and key, never a rule that silently does not hold.
func TestAuthorizer_refusesPoliciesNothingAsksAbout(t *testing.T) {
	for _, key := range []string{"skills", "sandbox", "custom_resource"} {
		t.Run(key, func(t *testing.T) {
			_, err := New(Options{ConfigFile: "config.yaml", Config: config.Authorization{Enabled: true, DefaultRole: "user",
				Provider: &config.AuthorizationProvider{Use: config.RBACAuthorizationUse, Config: map[string]any{"roles": map[string]any{
					"user": map[string]any{"tools": map[string]any{"allow": "*"}, key: map[string]any{"deny": []any{"x"}}},
				}}}}})
			var ce *config.Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "role 'user' resource '"+key+"'") ||
				!strings.Contains(err.Error(), "would not hold") {
				t.Fatalf("New = %v, want a *config.Error naming role 'user' resource %q", err, key)
			}
		})
	}
	rbacAuthorizer(t, map[string]any{"user": map[string]any{
		"tools": map[string]any{"allow": "*"}, "models": map[string]any{"allow": "*"},
		"routes": map[string]any{"allow": "*"}, "mcp_servers": map[string]any{"deny": []any{"fs"}},
	}}, "user")
}

// TestAuthorizer_mcpServersPolicy: a role's mcp_servers policy hides the
// tools of a denied server and refuses a call to one anyway; tools of
// other servers and tools of no server are untouched.
func TestAuthorizer_mcpServersPolicy(t *testing.T) {
	a := rbacAuthorizer(t, map[string]any{
		"user": map[string]any{"mcp_servers": map[string]any{"deny": []any{"fs"}}},
	}, "user")
	rc := map[string]any{"user_role": "user"}
	if got := a.VisibleMCPServers(context.Background(), rc, []string{"fs", "docs"}); !cmp.Equal(got, []string{"docs"}) {
		t.Errorf("VisibleMCPServers = %v, want [docs]", got)
	}
	for _, tc := range []struct {
		name, server string
		wantRun      bool
	}{
		{"a denied server's tool never runs", "fs", false},
		{"another server's tool runs", "docs", true},
		{"a tool of no server runs", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := &tool.Call{Name: "fs_write", Context: rc}
			if tc.server != "" {
				call.Meta = map[string]string{tool.MetaMCPServer: tc.server}
			}
			res, ran := run(t, a, call)
			if ran != tc.wantRun {
				t.Fatalf("ran = %v, want %v (%s)", ran, tc.wantRun, res.TextContent())
			}
			if !ran && (!res.IsError || !strings.Contains(res.TextContent(), "Guardrail denied: tool 'fs_write' was blocked")) {
				t.Errorf("denied result = %q (is_error %v)", res.TextContent(), res.IsError)
			}
		})
	}
}
