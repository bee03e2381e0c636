package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAuthorization_defaults: off, fail closed, default_role user, no
// provider (DeerFlow's AuthorizationConfig defaults).
func TestAuthorization_defaults(t *testing.T) {
	c := mustParse(t, "models: []\n", nil)
	if diff := cmp.Diff(Authorization{FailClosed: true, DefaultRole: "user"}, c.Authorization); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if slices.Contains(c.Ignored, "authorization") {
		t.Error("authorization is reported ignored")
	}
}

// TestAuthorization_loadsProvider: the section with an RBAC provider
// decodes, provider config kept as a map with its lines recorded.
func TestAuthorization_loadsProvider(t *testing.T) {
	src := `authorization:
  enabled: true
  default_role: guest
  provider:
    use: deerflow.authz.rbac:RbacAuthorizationProvider
    config:
      roles:
        guest: {tools: {allow: [web_search]}}
`
	c := mustParse(t, src, nil)
	a := c.Authorization
	if !a.Enabled || a.DefaultRole != "guest" || a.Provider == nil || a.Provider.Use != RBACAuthorizationUse ||
		a.Provider.Line != 4 || a.Provider.UseLine != 5 {
		t.Fatalf("Authorization = %+v, provider %+v", a, a.Provider)
	}
	want := map[string]any{"roles": map[string]any{"guest": map[string]any{"tools": map[string]any{"allow": []any{"web_search"}}}}}
	if diff := cmp.Diff(want, a.Provider.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

// TestAuthorization_loadErrors: an enabled section without a provider or
// use string, an empty default_role, and contradictory gateway token
// entries are load errors naming the key and line.
func TestAuthorization_loadErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"enabled without provider", "authorization:\n  enabled: true\n", "config.yaml:2: authorization.provider: authorization.enabled is true but no provider is configured"},
		{"no use", "authorization:\n  enabled: true\n  provider:\n    config: {}\n", "authorization.provider.use: is required"},
		{"empty default role", "authorization:\n  default_role: \"\"\n", "authorization.default_role: must be a non-empty role name"},
		{"admin with another role", "gateway:\n  tokens:\n    - {token: a, user_id: alice, admin: true, role: guest}\n",
			"gateway.tokens[0].role: role \"guest\" contradicts admin: true"},
		{"one user two roles", "gateway:\n  tokens:\n    - {token: a, user_id: alice, role: guest}\n    - {token: b, user_id: alice}\n",
			"user \"alice\" already has role \"guest\" from an earlier entry"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tc.src), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Parse("config.yaml", []byte("authorization:\n  enabled: false\n  provider: {use: garbage.that.does.not.exist:Nope}\n"), nil); err != nil {
		t.Errorf("disabled section with an unknown provider: %v", err)
	}
}

// TestGatewayToken_roles: role, admin and default_role decide a token
// entry's role; role "admin" is an admin; the CLI's user gets its entry's
// role, else default_role.
func TestGatewayToken_roles(t *testing.T) {
	c := mustParse(t, `authorization: {default_role: member}
gateway:
  tokens:
    - {token: a, user_id: alice, admin: true}
    - {token: b, user_id: bob, role: guest}
    - {token: c, user_id: carol}
    - {token: d, user_id: dave, role: admin}
    - {token: e, user_id: erin, role: admin, admin: true}
`, nil)
	want := map[string][2]any{"alice": {"admin", true}, "bob": {"guest", false}, "carol": {"member", false},
		"dave": {"admin", true}, "erin": {"admin", true}}
	for _, tok := range c.Gateway.Tokens {
		got := [2]any{tok.EffectiveRole(c.Authorization.DefaultRole), tok.IsAdmin()}
		if got != want[tok.UserID] {
			t.Errorf("%s: role, admin = %v, want %v", tok.UserID, got, want[tok.UserID])
		}
	}
	if r, ok := c.UserRole("bob"); r != "guest" || !ok {
		t.Errorf("UserRole(bob) = %q, %v", r, ok)
	}
	if r, ok := c.UserRole("zoe"); r != "member" || ok {
		t.Errorf("UserRole(zoe) = %q, %v", r, ok)
	}
}
