package authz

import (
	"fmt"
	"maps"
)

// Runtime context keys of the caller's identity (DeerFlow's).
const (
	ContextUserID          = "user_id"
	ContextUserRole        = "user_role"
	ContextOAuthProvider   = "oauth_provider"
	ContextOAuthID         = "oauth_id"
	ContextChannelUserID   = "channel_user_id"
	ContextIsInternal      = "is_internal"
	ContextAuthzAttributes = "authz_attributes"
)

// principalFromContext builds the principal of a runtime context, the one
// way both layers build it (DeerFlow's build_principal_from_context): a
// missing or empty user_role becomes defaultRole, an unknown non-empty
// role is kept (the provider decides), is_internal counts only as the
// boolean true, and authz_attributes, when present, must be a mapping.
// rc is not modified.
func principalFromContext(rc map[string]any, defaultRole string) (Principal, error) {
	p := Principal{
		UserID:        str(rc[ContextUserID]),
		Role:          str(rc[ContextUserRole]),
		OAuthProvider: str(rc[ContextOAuthProvider]),
		OAuthID:       str(rc[ContextOAuthID]),
		ChannelUserID: str(rc[ContextChannelUserID]),
		Attributes:    map[string]any{},
	}
	if p.Role == "" {
		p.Role = defaultRole
	}
	p.IsInternal, _ = rc[ContextIsInternal].(bool)
	switch v := rc[ContextAuthzAttributes].(type) {
	case nil:
	case map[string]any:
		p.Attributes = maps.Clone(v)
	default:
		return Principal{}, fmt.Errorf("authz_attributes must be a Mapping, got %s", pyType(v))
	}
	return p, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// pyType names the type of a decoded YAML or JSON value as DeerFlow's
// messages do (dict, list, str, int, float, bool, NoneType).
func pyType(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case map[string]any:
		return "dict"
	case []any, []string:
		return "list"
	case string:
		return "str"
	case bool:
		return "bool"
	case int, int64, uint64:
		return "int"
	case float64, float32:
		return "float"
	}
	return fmt.Sprintf("%T", v)
}

// pyRepr is a value as Python's repr shows it in DeerFlow's messages.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return "'" + x + "'"
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	return fmt.Sprint(v)
}

// pyList is a sorted list of names as Python prints it: ['a', 'b'].
func pyList(names []string) string {
	out := "["
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += pyRepr(n)
	}
	return out + "]"
}
