package authz

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func rbac(t *testing.T, roles map[string]any) *RBAC {
	t.Helper()
	r, err := NewRBAC(map[string]any{"roles": roles})
	if err != nil {
		t.Fatalf("NewRBAC: %v", err)
	}
	return r
}

func pol(allow any, deny ...any) map[string]any {
	m := map[string]any{}
	if allow != nil {
		m["allow"] = allow
	}
	if deny != nil {
		m["deny"] = deny
	}
	return m
}

func toolReq(role, target string) Request {
	return Request{Principal: Principal{Role: role}, Resource: "tool", Action: "call", Target: target}
}

func allowed(t *testing.T, r *RBAC, req Request) bool {
	t.Helper()
	d, err := r.Authorize(context.Background(), req)
	if err != nil {
		t.Fatalf("Authorize(%+v): %v", req, err)
	}
	return d.Allow
}

// TestRBAC_allowAndDenySemantics re-expresses DeerFlow's allow and deny
// cases: "*", true, a list, an absent allow (all) and false or [] (none);
// deny always wins; names match exactly.
func TestRBAC_allowAndDenySemantics(t *testing.T) {
	cases := []struct {
		name   string
		policy map[string]any
		want   map[string]bool
	}{
		{"wildcard", pol("*"), map[string]bool{"bash": true, "write_file": true}},
		{"true", pol(true), map[string]bool{"bash": true}},
		{"false denies all", pol(false), map[string]bool{"bash": false, "web_search": false}},
		{"list", pol([]any{"web_search", "read_file"}), map[string]bool{"web_search": true, "read_file": true, "bash": false}},
		{"empty list denies all", pol([]any{}), map[string]bool{"bash": false}},
		{"missing allow is all, deny applies", map[string]any{"deny": []any{"bash"}}, map[string]bool{"bash": false, "web_search": true}},
		{"deny overrides wildcard", pol("*", "bash"), map[string]bool{"bash": false, "web_search": true}},
		{"deny overrides list", pol([]any{"bash", "web_search"}, "bash"), map[string]bool{"bash": false, "web_search": true}},
		{"deny overrides true", pol(true, "bash"), map[string]bool{"bash": false}},
		{"no globs", pol([]any{"mcp_*"}), map[string]bool{"mcp_github": false, "mcp_*": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rbac(t, map[string]any{"user": map[string]any{"tools": tc.policy}})
			for target, want := range tc.want {
				if got := allowed(t, r, toolReq("user", target)); got != want {
					t.Errorf("%s: allow = %v, want %v", target, got, want)
				}
			}
		})
	}
}

// TestRBAC_decisionTexts pins DeerFlow's reason codes, messages and
// policy ids.
func TestRBAC_decisionTexts(t *testing.T) {
	r := rbac(t, map[string]any{"guest": map[string]any{"tools": pol([]any{"read_file"})}})
	ctx := context.Background()
	deny, _ := r.Authorize(ctx, toolReq("guest", "bash"))
	want := Decision{Reasons: []Reason{{Code: "authz.denied", Message: "role 'guest' is denied 'bash' on resource 'tool'"}}, PolicyID: "rbac:deny"}
	if diff := cmp.Diff(want, deny); diff != "" {
		t.Errorf("deny (-want +got):\n%s", diff)
	}
	allow, _ := r.Authorize(ctx, toolReq("guest", "read_file"))
	if diff := cmp.Diff(Decision{Allow: true, Reasons: []Reason{{Code: "authz.allowed"}}, PolicyID: "rbac:allow"}, allow); diff != "" {
		t.Errorf("allow (-want +got):\n%s", diff)
	}
	none, _ := r.Authorize(ctx, Request{Principal: Principal{Role: "guest"}, Resource: "model", Action: "use", Target: "gpt-4"})
	if diff := cmp.Diff(Decision{Allow: true, Reasons: []Reason{{Code: "authz.no_policy", Message: "no policy configured"}},
		PolicyID: "rbac:unrestricted"}, none); diff != "" {
		t.Errorf("no policy (-want +got):\n%s", diff)
	}
}

// TestRBAC_resourceMapping: request types map to config keys (tool to
// tools, ...), aliases in config are refused, other types use their own
// name, and a missing policy is unrestricted.
func TestRBAC_resourceMapping(t *testing.T) {
	for alias, key := range map[string]string{"tool": "tools", "model": "models", "skill": "skills", "mcp_server": "mcp_servers", "route": "routes"} {
		_, err := NewRBAC(map[string]any{"roles": map[string]any{"user": map[string]any{alias: pol([]any{})}}})
		want := "resource key '" + alias + "' is a reserved request alias; use '" + key + "'"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("alias %s: err = %v, want %q", alias, err, want)
		}
	}
	r := rbac(t, map[string]any{"user": map[string]any{
		"sandbox": pol([]any{}), "models": pol([]any{"gpt-4o"}), "custom_resource": pol([]any{"item1"}), "tools": pol([]any{"web_search"}),
	}})
	checks := []struct {
		resource, target string
		want             bool
	}{
		{"sandbox", "default", false}, {"model", "gpt-4o", true}, {"model", "claude", false},
		{"custom_resource", "item1", true}, {"tool", "web_search", true}, {"tool", "bash", false}, {"route", "threads:read", true},
	}
	for _, c := range checks {
		req := Request{Principal: Principal{Role: "user"}, Resource: c.resource, Action: "x", Target: c.target}
		if got := allowed(t, r, req); got != c.want {
			t.Errorf("%s %s: allow = %v, want %v", c.resource, c.target, got, c.want)
		}
	}
}

// TestRBAC_roleResolution: an unknown, missing or empty role is an error,
// never an allow.
func TestRBAC_roleResolution(t *testing.T) {
	r := rbac(t, map[string]any{"admin": map[string]any{"tools": pol("*")}, "user": map[string]any{"tools": pol([]any{})}})
	if !allowed(t, r, toolReq("admin", "bash")) || allowed(t, r, toolReq("user", "bash")) {
		t.Error("known roles: admin must be allowed bash, user denied")
	}
	for role, want := range map[string]string{"editor": "Unknown role 'editor'; known roles: ['admin', 'user']", "": "no role"} {
		_, err := r.Authorize(context.Background(), toolReq(role, "bash"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("role %q: err = %v, want %q", role, err, want)
		}
		if _, err := r.FilterResources(context.Background(), Principal{Role: role}, "tool", []string{"bash"}); err == nil {
			t.Errorf("FilterResources with role %q: no error", role)
		}
	}
}

// TestRBAC_filterResources: order and duplicates kept, nothing added, the
// input untouched, consistent with Authorize, bad identifiers refused.
func TestRBAC_filterResources(t *testing.T) {
	ctx := context.Background()
	r := rbac(t, map[string]any{"user": map[string]any{"tools": pol([]any{"web_search", "bash", "read_file"})}, "open": map[string]any{}})
	in := []string{"bash", "web_search", "write_file", "read_file", "bash"}
	got, err := r.FilterResources(ctx, Principal{Role: "user"}, "tool", in)
	if err != nil || !cmp.Equal(got, []string{"bash", "web_search", "read_file", "bash"}) {
		t.Errorf("FilterResources = %v, %v", got, err)
	}
	if !cmp.Equal(in, []string{"bash", "web_search", "write_file", "read_file", "bash"}) {
		t.Errorf("input modified: %v", in)
	}
	if got, _ := r.FilterResources(ctx, Principal{Role: "open"}, "tool", []string{"a", "b"}); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("unrestricted = %v", got)
	}
	d := rbac(t, map[string]any{"user": map[string]any{"tools": pol("*", "bash")}})
	cands := []string{"bash", "web_search", "read_file", "write_file"}
	filtered, _ := d.FilterResources(ctx, Principal{Role: "user"}, "tool", cands)
	var perItem []string
	for _, c := range cands {
		if allowed(t, d, toolReq("user", c)) {
			perItem = append(perItem, c)
		}
	}
	if !cmp.Equal(filtered, perItem) {
		t.Errorf("filter %v disagrees with authorize %v", filtered, perItem)
	}
	if _, err := r.FilterResources(ctx, Principal{Role: "user"}, "", []string{"bash"}); err == nil || !strings.Contains(err.Error(), "resource_type must be a non-empty string") {
		t.Errorf("empty resource_type: %v", err)
	}
	if _, err := r.FilterResources(ctx, Principal{Role: "open"}, "tool", []string{"bash", ""}); err == nil || !strings.Contains(err.Error(), "candidates[1] must be a non-empty string") {
		t.Errorf("empty candidate: %v", err)
	}
	if _, err := r.Authorize(ctx, Request{Principal: Principal{Role: "open"}, Resource: "tool", Target: ""}); err == nil || !strings.Contains(err.Error(), "target must be a non-empty string") {
		t.Errorf("empty target: %v", err)
	}
	if _, err := r.Authorize(ctx, Request{Principal: Principal{Role: "user"}, Resource: "", Target: "x"}); err == nil || !strings.Contains(err.Error(), "resource must be a non-empty string") {
		t.Errorf("empty resource: %v", err)
	}
}

// TestRBAC_constructionValidation: invalid config fails at construction
// with DeerFlow's messages, never silently granting.
func TestRBAC_constructionValidation(t *testing.T) {
	cases := []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"unknown provider key", map[string]any{"roles": map[string]any{"user": map[string]any{}}, "bogus": true}, "unknown provider config keys ['bogus']; supported: ['roles']"},
		{"misspelt roles", map[string]any{"rolez": map[string]any{}}, "unknown provider config keys ['rolez']"},
		{"missing roles", map[string]any{}, "missing required provider config key 'roles'"},
		{"roles not a dict", map[string]any{"roles": []any{"not", "a", "dict"}}, "roles must be a dict, got list"},
		{"role config not a dict", map[string]any{"roles": map[string]any{"user": "x"}}, "role 'user' config must be a dict, got str"},
		{"policy not a dict", map[string]any{"roles": map[string]any{"user": map[string]any{"tools": "x"}}}, "role 'user' resource 'tools' must be a dict, got str"},
		{"allow int", roles(map[string]any{"allow": 42}), "allow must be '*', bool, or list of strings, got int"},
		{"allow string", roles(map[string]any{"allow": "not_wildcard"}), "allow string must be '*', got 'not_wildcard'"},
		{"allow non-string item", roles(map[string]any{"allow": []any{"ok", 42}}), "allow list contains non-string or empty item 42"},
		{"allow empty item", roles(map[string]any{"allow": []any{"ok", ""}}), "allow list contains non-string or empty item ''"},
		{"deny non-string item", roles(map[string]any{"deny": []any{"ok", nil}}), "deny list contains non-string or empty item None"},
		{"deny int", roles(map[string]any{"deny": 42}), "deny must be a list of strings, got int"},
		{"empty role name", map[string]any{"roles": map[string]any{"": map[string]any{"tools": pol("*")}}}, "role name must be a non-empty string"},
		{"empty resource key", map[string]any{"roles": map[string]any{"user": map[string]any{"": pol("*")}}}, "invalid resource key ''"},
		{"null allow", roles(map[string]any{"allow": nil}), "allow must not be null"},
		{"null deny", roles(map[string]any{"allow": "*", "deny": nil}), "deny must not be null"},
		{"misspelt policy key", roles(map[string]any{"alow": []any{"web_search"}}), "unknown policy keys ['alow']; supported: ['allow', 'deny']"},
		{"unknown key beside valid ones", roles(map[string]any{"allow": "*", "permt": []any{"x"}}), "unknown policy keys ['permt']"},
		{"mixed-type keys", map[string]any{"roles": map[string]any{"user": map[string]any{"tools": map[any]any{1: "bad", "other": "bad"}}}}, "unknown policy keys"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewRBAC(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func roles(toolsPolicy map[string]any) map[string]any {
	return map[string]any{"roles": map[string]any{"user": map[string]any{"tools": toolsPolicy}}}
}

// TestRBAC_configMutationAfterConstruction: the compiled policy does not
// follow later changes of the config it came from.
func TestRBAC_configMutationAfterConstruction(t *testing.T) {
	tools := map[string]any{"allow": []any{"bash"}}
	rs := map[string]any{"user": map[string]any{"tools": tools}}
	r, err := NewRBAC(map[string]any{"roles": rs})
	if err != nil {
		t.Fatal(err)
	}
	tools["allow"] = []any{"web_search"}
	rs["admin"] = map[string]any{"tools": pol("*")}
	if !allowed(t, r, toolReq("user", "bash")) || allowed(t, r, toolReq("user", "web_search")) {
		t.Error("policy changed with its config")
	}
	if _, err := r.Authorize(context.Background(), toolReq("admin", "bash")); err == nil || !strings.Contains(err.Error(), "Unknown role") {
		t.Errorf("role added after construction: %v", err)
	}
}
