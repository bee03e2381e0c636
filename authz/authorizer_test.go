package authz

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
)

// fakeProvider allows everything but the names in denied, fails for the
// names (targets or resource types) in errors, and records its requests.
type fakeProvider struct {
	denied, errors map[string]bool
	add            []string // extra names FilterResources returns
	requests       []Request
}

func (f *fakeProvider) Name() string { return "fake" }

func (f *fakeProvider) Authorize(_ context.Context, req Request) (Decision, error) {
	f.requests = append(f.requests, req)
	if f.errors[req.Target] {
		return Decision{}, errors.New("provider failed for " + req.Target)
	}
	if f.denied[req.Target] {
		return Decision{Reasons: []Reason{{Code: "authz.denied", Message: "blocked"}}}, nil
	}
	return Decision{Allow: true, Reasons: []Reason{{Code: "authz.allowed"}}}, nil
}

func (f *fakeProvider) FilterResources(_ context.Context, _ Principal, rt string, cands []string) ([]string, error) {
	if f.errors[rt] {
		return nil, errors.New("provider failed for " + rt)
	}
	var out []string
	for _, c := range cands {
		if !f.denied[c] {
			out = append(out, c)
		}
	}
	return append(out, f.add...), nil
}

func set1(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// custom returns an enabled Authorizer over p.
func custom(t *testing.T, p Provider, failClosed bool) *Authorizer {
	t.Helper()
	a, err := New(Options{Config: config.Authorization{Enabled: true, FailClosed: failClosed, DefaultRole: "user",
		Provider: &config.AuthorizationProvider{Use: "corp:Provider"}},
		Providers: map[string]Factory{"corp:Provider": func(map[string]any) (Provider, error) { return p, nil }}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

func rbacAuthorizer(t *testing.T, roles map[string]any, defaultRole string) *Authorizer {
	t.Helper()
	a, err := New(Options{Config: config.Authorization{Enabled: true, FailClosed: true, DefaultRole: defaultRole,
		Provider: &config.AuthorizationProvider{Use: config.RBACAuthorizationUse, Config: map[string]any{"roles": roles}}}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// TestAuthorizer_resolution re-expresses DeerFlow's provider-factory
// cases: off needs no provider and loads nothing, on without a provider is
// an error, RBAC and custom providers resolve, a Python class path Antler
// cannot load is a config error (never ignored), and RBAC construction
// errors and an undefined default_role name the provider.
func TestAuthorizer_resolution(t *testing.T) {
	off, err := New(Options{Config: config.Authorization{Provider: &config.AuthorizationProvider{Use: "garbage.that.does.not.exist:Nope"}}})
	if err != nil || off.Enabled() {
		t.Errorf("disabled: %v, enabled %v", err, off.Enabled())
	}
	cases := []struct {
		name string
		c    config.Authorization
		want string
	}{
		{"enabled without provider", config.Authorization{Enabled: true}, "no provider is configured"},
		{"python class", config.Authorization{Enabled: true, Provider: &config.AuthorizationProvider{Use: "nonexistent.module:FakeProvider"}},
			"Failed to resolve authorization provider class 'nonexistent.module:FakeProvider'"},
		{"rbac bogus key", config.Authorization{Enabled: true, Provider: &config.AuthorizationProvider{Use: config.RBACAuthorizationUse,
			Config: map[string]any{"roles": map[string]any{"user": map[string]any{}}, "bogus": true}}}, "RbacAuthorizationProvider': unknown provider config keys ['bogus']"},
		{"rbac bad roles", config.Authorization{Enabled: true, Provider: &config.AuthorizationProvider{Use: config.RBACAuthorizationUse,
			Config: map[string]any{"roles": "not a dict"}}}, "Failed to construct authorization provider 'deerflow.authz.rbac:RbacAuthorizationProvider'"},
		{"unknown default role", config.Authorization{Enabled: true, DefaultRole: "missing", Provider: &config.AuthorizationProvider{Use: config.RBACAuthorizationUse,
			Config: map[string]any{"roles": map[string]any{"user": map[string]any{"tools": map[string]any{"allow": "*"}}}}}},
			"authorization.default_role 'missing' is not defined; known roles: ['user']"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Options{Config: tc.c, ConfigFile: "config.yaml"})
			var ce *config.Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a *config.Error containing %q", err, tc.want)
			}
		})
	}
	a := rbacAuthorizer(t, map[string]any{"guest": map[string]any{"tools": map[string]any{"allow": "*"}}}, "guest")
	if !a.Enabled() || a.Provider().Name() != "rbac" {
		t.Errorf("rbac: enabled %v, provider %v", a.Enabled(), a.Provider())
	}
}

// TestAuthorizer_toolFilter re-expresses DeerFlow's tool-filter cases:
// the allowed subset in input order, fail closed to nothing and fail open
// to everything on a provider error, no tool added by the provider, an
// unknown role denying all when fail_closed, and off changing nothing.
func TestAuthorizer_toolFilter(t *testing.T) {
	ctx := context.Background()
	tools := []string{"bash", "web_search", "read_file", "write_file"}
	r := rbacAuthorizer(t, map[string]any{
		"admin": map[string]any{"tools": map[string]any{"allow": "*"}},
		"user":  map[string]any{"tools": map[string]any{"allow": "*", "deny": []any{"update_agent", "bash"}}},
		"guest": map[string]any{"tools": map[string]any{"allow": []any{"web_search", "read_file"}}},
	}, "user")
	cases := []struct {
		name string
		a    *Authorizer
		rc   map[string]any
		want []string
	}{
		{"user loses bash", r, map[string]any{"user_role": "user"}, []string{"web_search", "read_file", "write_file"}},
		{"guest narrow allowlist", r, map[string]any{"user_role": "guest"}, []string{"web_search", "read_file"}},
		{"missing role is default_role", r, map[string]any{}, []string{"web_search", "read_file", "write_file"}},
		{"unknown role fails closed", r, map[string]any{"user_role": "nonexistent"}, []string{}},
		{"provider error fails closed", custom(t, &fakeProvider{errors: set1("tool")}, true), nil, []string{}},
		{"provider error fails open when configured", custom(t, &fakeProvider{errors: set1("tool")}, false), nil, tools},
		{"provider cannot add tools", custom(t, &fakeProvider{add: []string{"injected_tool"}, denied: set1("bash")}, true), nil,
			[]string{"web_search", "read_file", "write_file"}},
		{"bad authz_attributes fails closed", r, map[string]any{"authz_attributes": []any{1}}, []string{}},
		{"off keeps all", &Authorizer{}, map[string]any{"user_role": "guest"}, tools},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.a.VisibleTools(ctx, tc.rc, tools)); diff != "" {
				t.Errorf("VisibleTools (-want +got):\n%s", diff)
			}
		})
	}
}
