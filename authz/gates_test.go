package authz

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRoutePermissions re-expresses DeerFlow's route-permission cases:
// off holds all six, each permission is its own route request, a failure
// affects only its permission (fail closed or open), and the RBAC routes
// policy grants exactly what it lists.
func TestRoutePermissions(t *testing.T) {
	ctx := context.Background()
	p := Principal{UserID: "user-123", Role: "user", IsInternal: true}
	if got := (&Authorizer{}).HeldRoutePermissions(ctx, p); !cmp.Equal(got, routePermissions()) {
		t.Errorf("off = %v", got)
	}
	rec := &fakeProvider{denied: set1(ThreadsDelete, RunsCancel)}
	got := custom(t, rec, true).HeldRoutePermissions(ctx, p)
	if !cmp.Equal(got, []string{ThreadsRead, ThreadsWrite, RunsCreate, RunsRead}) {
		t.Errorf("denied two = %v", got)
	}
	var asked [][3]string
	for _, r := range rec.requests {
		asked = append(asked, [3]string{r.Resource, r.Action, r.Target})
		if r.Principal.UserID != "user-123" || !r.Principal.IsInternal {
			t.Errorf("principal = %+v", r.Principal)
		}
	}
	want := [][3]string{{"route", "read", ThreadsRead}, {"route", "write", ThreadsWrite}, {"route", "delete", ThreadsDelete},
		{"route", "create", RunsCreate}, {"route", "read", RunsRead}, {"route", "cancel", RunsCancel}}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if got := custom(t, &fakeProvider{errors: set1(RunsCancel)}, true).HeldRoutePermissions(ctx, p); !cmp.Equal(got, routePermissions()[:5]) {
		t.Errorf("fail closed = %v", got)
	}
	if got := custom(t, &fakeProvider{errors: set1(RunsCancel)}, false).HeldRoutePermissions(ctx, p); !cmp.Equal(got, routePermissions()) {
		t.Errorf("fail open = %v", got)
	}
	r := rbacAuthorizer(t, map[string]any{"user": map[string]any{"routes": map[string]any{"allow": []any{ThreadsRead, RunsRead}}}}, "user")
	if got := r.HeldRoutePermissions(ctx, p); !cmp.Equal(got, []string{ThreadsRead, RunsRead}) {
		t.Errorf("rbac routes = %v", got)
	}
	if RouteDeniedMessage(ThreadsDelete) != "Permission denied: threads:delete" {
		t.Error(RouteDeniedMessage(ThreadsDelete))
	}
}

// TestChooseModel re-expresses DeerFlow's runtime model cases: off and
// allowed keep the model, a denied one falls back to the first usable,
// none usable is an error when fail_closed and keeps the model when not,
// and a model visible but not usable is never chosen.
func TestChooseModel(t *testing.T) {
	ctx := context.Background()
	all := []string{"gpt-4", "claude-3"}
	p := Principal{Role: "user"}
	models := func(allow ...any) map[string]any {
		return map[string]any{"user": map[string]any{"models": map[string]any{"allow": allow}}}
	}
	cases := []struct {
		name    string
		a       *Authorizer
		want    string
		wantErr error
	}{
		{"off", &Authorizer{}, "gpt-4", nil},
		{"allowed", rbacAuthorizer(t, models("gpt-4", "claude-3"), "user"), "gpt-4", nil},
		{"denied falls back", rbacAuthorizer(t, models("claude-3"), "user"), "claude-3", nil},
		{"none fails closed", rbacAuthorizer(t, models(), "user"), "", ErrNoAuthorizedModel},
		{"none fails open", func() *Authorizer {
			a := rbacAuthorizer(t, models(), "user")
			a.failClosed = false
			return a
		}(), "gpt-4", nil},
		{"list but not use falls back", custom(t, &fakeProvider{denied: set1("gpt-4")}, true), "claude-3", nil},
		{"visible but unusable fails closed", custom(t, &fakeProvider{errors: set1("claude-3"), denied: set1("gpt-4")}, true), "", errModelProvider},
		{"provider error fails open", custom(t, &fakeProvider{errors: set1("gpt-4")}, false), "gpt-4", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.a.ChooseModel(ctx, p, "gpt-4", all)
			if got != tc.want || !errors.Is(err, tc.wantErr) {
				t.Errorf("ChooseModel = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
	r := rbacAuthorizer(t, models("claude-3"), "user")
	if r.AllowModel(ctx, p, "gpt-4") || !r.AllowModel(ctx, p, "claude-3") {
		t.Error("AllowModel")
	}
	if e := (&ModelDeniedError{Model: "gpt-4"}).Error(); e != "Model 'gpt-4' is not available for your role" {
		t.Error(e)
	}
}
