package authz

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// rbacName is the RBAC provider's name.
const rbacName = "rbac"

// resourcePolicyKeys maps a request's resource type (singular) to the
// config key of its policy (DeerFlow's _RESOURCE_POLICY_KEYS). Other
// resource types use their own name as the key.
func resourcePolicyKey(resource string) (string, bool) {
	switch resource {
	case "tool":
		return "tools", true
	case "model":
		return "models", true
	case "skill":
		return "skills", true
	case "sandbox":
		return "sandbox", true
	case "mcp_server":
		return "mcp_servers", true
	case "route":
		return "routes", true
	}
	return resource, false
}

// policy is the compiled policy of one role and resource type. all means
// every target is allowed unless denied; deny always wins.
type policy struct {
	all     bool
	allowed map[string]bool
	denied  map[string]bool
}

func (p policy) allows(target string) bool {
	if p.denied[target] {
		return false
	}
	return p.all || p.allowed[target]
}

type policyKey struct{ role, resource string }

// RBAC is DeerFlow's built-in role-based provider
// (RbacAuthorizationProvider): each role maps resource types (tools,
// models, routes, ...) to {allow, deny} policies. Names match exactly (no
// globs); allow is "*", true, false or a list, absent meaning all; deny is
// a list and always wins; a role without a policy for a resource type is
// unrestricted there; an unknown or missing role is an error, so that
// fail_closed decides. The action is not a rule dimension. An RBAC is
// immutable and safe for concurrent use.
type RBAC struct {
	roles    map[string]bool
	policies map[policyKey]policy
}

// NewRBAC compiles the RBAC provider's config ({roles: {...}}), with
// DeerFlow's validation and messages: an unknown key, a misspelt policy
// key, a null allow or deny, a reserved alias ("tool" for "tools") or an
// empty name is an error, never a silent grant.
func NewRBAC(config map[string]any) (*RBAC, error) {
	var unknown []string
	for k := range config {
		if k != "roles" {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("unknown provider config keys %s; supported: ['roles']", pyList(unknown))
	}
	raw, ok := config["roles"]
	if !ok {
		return nil, errors.New("missing required provider config key 'roles'")
	}
	roles, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("roles must be a dict, got %s", pyType(raw))
	}
	r := &RBAC{roles: map[string]bool{}, policies: map[policyKey]policy{}}
	for _, name := range slices.Sorted(maps.Keys(roles)) {
		if err := r.addRole(name, roles[name]); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *RBAC) addRole(name string, raw any) error {
	if name == "" {
		return fmt.Errorf("role name must be a non-empty string, got %s", pyRepr(name))
	}
	cfg, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("role '%s' config must be a dict, got %s", name, pyType(raw))
	}
	r.roles[name] = true
	for _, key := range slices.Sorted(maps.Keys(cfg)) {
		if key == "" {
			return fmt.Errorf("role '%s' has invalid resource key %s", name, pyRepr(key))
		}
		if mapped, alias := resourcePolicyKey(key); alias && mapped != key {
			return fmt.Errorf("role '%s' resource key '%s' is a reserved request alias; use '%s' in RBAC config", name, key, mapped)
		}
		pol, err := compilePolicy(name, key, cfg[key])
		if err != nil {
			return err
		}
		r.policies[policyKey{name, key}] = pol
	}
	return nil
}

// enforcedResources are the policy keys of the built-in RBAC provider
// that Antler asks about. DeerFlow's RBAC accepts any resource type
// (skills, sandbox, ...) and asks only about some; Antler refuses a policy
// nothing would ask about rather than let an operator believe it holds.
func enforcedResources() []string { return []string{"mcp_servers", "models", "routes", "tools"} }

// enforcedOnly returns an error naming the first role and resource key
// whose policy Antler never asks about.
func (r *RBAC) enforcedOnly() error {
	keys := slices.SortedFunc(maps.Keys(r.policies), func(a, b policyKey) int {
		return cmp.Or(strings.Compare(a.role, b.role), strings.Compare(a.resource, b.resource))
	})
	for _, k := range keys {
		if !slices.Contains(enforcedResources(), k.resource) {
			return fmt.Errorf("role '%s' resource '%s': Antler enforces only %s policies, so this one would not hold; remove it",
				k.role, k.resource, strings.Join(enforcedResources(), ", "))
		}
	}
	return nil
}

// compilePolicy validates one {allow, deny} policy.
func compilePolicy(role, resource string, raw any) (policy, error) {
	at := fmt.Sprintf("role '%s' resource '%s'", role, resource)
	m, ok := raw.(map[string]any)
	if !ok {
		if mm, mixed := raw.(map[any]any); mixed {
			keys := make([]string, 0, len(mm))
			for k := range mm {
				keys = append(keys, fmt.Sprint(k))
			}
			slices.Sort(keys)
			return policy{}, fmt.Errorf("%s: unknown policy keys %s; supported: ['allow', 'deny']", at, pyList(keys))
		}
		return policy{}, fmt.Errorf("%s must be a dict, got %s", at, pyType(raw))
	}
	var unknown []string
	for k := range m {
		if k != "allow" && k != "deny" {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return policy{}, fmt.Errorf("%s: unknown policy keys %s; supported: ['allow', 'deny']", at, pyList(unknown))
	}
	pol := policy{all: true}
	if v, ok := m["allow"]; ok {
		var err error
		if pol.all, pol.allowed, err = compileAllow(at, v); err != nil {
			return policy{}, err
		}
	}
	if v, ok := m["deny"]; ok {
		if v == nil {
			return policy{}, fmt.Errorf("%s: deny must not be null; omit the key for no deny list", at)
		}
		list, ok := stringList(v)
		if !ok {
			return policy{}, fmt.Errorf("%s: deny must be a list of strings, got %s", at, pyType(v))
		}
		if bad, found := badItem(list); found {
			return policy{}, fmt.Errorf("%s: deny list contains non-string or empty item %s", at, pyRepr(bad))
		}
		pol.denied = set(list)
	}
	return pol, nil
}

// compileAllow reads an allow value: "*" or true (all), false (none) or
// a list of names.
func compileAllow(at string, v any) (all bool, allowed map[string]bool, err error) {
	switch x := v.(type) {
	case nil:
		return false, nil, fmt.Errorf("%s: allow must not be null; omit the key, or use '*' / bool / list", at)
	case bool:
		return x, nil, nil
	case string:
		if x != "*" {
			return false, nil, fmt.Errorf("%s: allow string must be '*', got %s", at, pyRepr(x))
		}
		return true, nil, nil
	}
	list, ok := stringList(v)
	if !ok {
		return false, nil, fmt.Errorf("%s: allow must be '*', bool, or list of strings, got %s", at, pyType(v))
	}
	if bad, found := badItem(list); found {
		return false, nil, fmt.Errorf("%s: allow list contains non-string or empty item %s", at, pyRepr(bad))
	}
	return false, set(list), nil
}

// stringList returns the items of a YAML list (not yet checked to be
// strings).
func stringList(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// badItem returns the first item that is not a non-empty string.
func badItem(items []any) (any, bool) {
	for _, it := range items {
		if s, ok := it.(string); !ok || s == "" {
			return it, true
		}
	}
	return nil, false
}

func set(items []any) map[string]bool {
	out := make(map[string]bool, len(items))
	for _, it := range items {
		out[it.(string)] = true
	}
	return out
}

// Name is "rbac".
func (r *RBAC) Name() string { return rbacName }

// Roles returns the defined roles, sorted.
func (r *RBAC) Roles() []string { return slices.Sorted(maps.Keys(r.roles)) }

// ValidateRole reports an error when role is not defined. field names the
// setting in the message ("role" for a request's role).
func (r *RBAC) ValidateRole(role, field string) error {
	if role == "" {
		return fmt.Errorf("%s must be a non-empty string, got ''", field)
	}
	if !r.roles[role] {
		if field == "role" {
			return fmt.Errorf("Unknown role '%s'; known roles: %s", role, pyList(r.Roles())) //lint:ignore ST1005 DeerFlow's message
		}
		return fmt.Errorf("%s '%s' is not defined; known roles: %s", field, role, pyList(r.Roles()))
	}
	return nil
}

// resolve returns the policy of the principal's role for resource, and
// whether there is one (none: unrestricted).
func (r *RBAC) resolve(p Principal, resource, field string) (policy, bool, error) {
	if p.Role == "" {
		return policy{}, false, errors.New("Principal has no role; cannot evaluate RBAC policy")
	}
	if err := r.ValidateRole(p.Role, "role"); err != nil {
		return policy{}, false, err
	}
	if resource == "" {
		return policy{}, false, fmt.Errorf("%s must be a non-empty string, got ''", field)
	}
	key, _ := resourcePolicyKey(resource)
	pol, ok := r.policies[policyKey{p.Role, key}]
	return pol, ok, nil
}

// Authorize answers one request.
func (r *RBAC) Authorize(_ context.Context, req Request) (Decision, error) {
	pol, ok, err := r.resolve(req.Principal, req.Resource, "resource")
	if err != nil {
		return Decision{}, err
	}
	if req.Target == "" {
		return Decision{}, errors.New("target must be a non-empty string, got ''")
	}
	switch {
	case !ok:
		return Decision{Allow: true, Reasons: []Reason{{Code: "authz.no_policy", Message: "no policy configured"}},
			PolicyID: "rbac:unrestricted"}, nil
	case pol.allows(req.Target):
		return Decision{Allow: true, Reasons: []Reason{{Code: "authz.allowed"}}, PolicyID: "rbac:allow"}, nil
	}
	return Decision{Reasons: []Reason{{Code: "authz.denied",
		Message: fmt.Sprintf("role '%s' is denied '%s' on resource '%s'", req.Principal.Role, req.Target, req.Resource)}},
		PolicyID: "rbac:deny"}, nil
}

// FilterResources returns the allowed candidates in their order,
// duplicates kept, never adding one.
func (r *RBAC) FilterResources(_ context.Context, p Principal, resourceType string, candidates []string) ([]string, error) {
	pol, ok, err := r.resolve(p, resourceType, "resource_type")
	if err != nil {
		return nil, err
	}
	for i, c := range candidates {
		if c == "" {
			return nil, fmt.Errorf("candidates[%d] must be a non-empty string, got ''", i)
		}
	}
	if !ok {
		return slices.Clone(candidates), nil
	}
	out := make([]string, 0, len(candidates))
	for _, c := range candidates {
		if pol.allows(c) {
			out = append(out, c)
		}
	}
	return out, nil
}
