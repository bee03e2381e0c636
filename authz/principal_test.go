package authz

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPrincipalFromContext re-expresses DeerFlow's principal-builder
// cases: every field mapped, default_role only for a missing or empty
// role, is_internal only for true, attributes copied and checked.
func TestPrincipalFromContext(t *testing.T) {
	full := map[string]any{"user_id": "u1", "user_role": "admin", "oauth_provider": "github", "oauth_id": "gh-123",
		"channel_user_id": "ou_sender_1", "is_internal": true, "authz_attributes": map[string]any{"department": "eng"}}
	cases := []struct {
		name string
		rc   map[string]any
		want Principal
	}{
		{"empty context", map[string]any{}, Principal{Role: "user", Attributes: map[string]any{}}},
		{"full mapping", full, Principal{UserID: "u1", Role: "admin", OAuthProvider: "github", OAuthID: "gh-123",
			ChannelUserID: "ou_sender_1", IsInternal: true, Attributes: map[string]any{"department": "eng"}}},
		{"nil role uses default", map[string]any{"user_role": nil}, Principal{Role: "user", Attributes: map[string]any{}}},
		{"empty role uses default", map[string]any{"user_role": ""}, Principal{Role: "user", Attributes: map[string]any{}}},
		{"unknown role kept", map[string]any{"user_role": "editor"}, Principal{Role: "editor", Attributes: map[string]any{}}},
		{"is_internal string is false", map[string]any{"is_internal": "true"}, Principal{Role: "user", Attributes: map[string]any{}}},
		{"is_internal 1 is false", map[string]any{"is_internal": 1}, Principal{Role: "user", Attributes: map[string]any{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := principalFromContext(tc.rc, "user")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	attrs := map[string]any{"team": "platform"}
	p, _ := principalFromContext(map[string]any{"authz_attributes": attrs}, "user")
	attrs["team"] = "changed"
	if p.Attributes["team"] != "platform" {
		t.Error("attributes not copied")
	}
	for _, bad := range []any{[]any{1, 2}, "not a mapping", 42} {
		if _, err := principalFromContext(map[string]any{"authz_attributes": bad}, "user"); err == nil || !strings.Contains(err.Error(), "authz_attributes must be a Mapping") {
			t.Errorf("%v: err = %v", bad, err)
		}
	}
	if _, err := principalFromContext(map[string]any{"authz_attributes": []any{1}}, "user"); err == nil || !strings.Contains(err.Error(), "list") {
		t.Errorf("type name missing: %v", err)
	}
	before := map[string]any{"user_id": "u1", "user_role": "admin"}
	_, _ = principalFromContext(before, "user")
	if !cmp.Equal(before, map[string]any{"user_id": "u1", "user_role": "admin"}) {
		t.Error("context modified")
	}
}
