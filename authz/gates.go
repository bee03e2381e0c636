package authz

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// The route permissions of the gateway (DeerFlow's Permissions), each
// "resource:action".
const (
	ThreadsRead   = "threads:read"
	ThreadsWrite  = "threads:write"
	ThreadsDelete = "threads:delete"
	RunsCreate    = "runs:create"
	RunsRead      = "runs:read"
	RunsCancel    = "runs:cancel"
)

// routePermissions lists every route permission, in DeerFlow's order.
func routePermissions() []string {
	return []string{ThreadsRead, ThreadsWrite, ThreadsDelete, RunsCreate, RunsRead, RunsCancel}
}

// AllowRoute reports whether the principal holds a route permission
// ("threads:read"): the request is resource "route", its action the part
// after the colon, its target the permission. Off, every permission is
// held; a provider failure denies it when fail_closed.
func (a *Authorizer) AllowRoute(ctx context.Context, p Principal, permission string) bool {
	if !a.Enabled() {
		return true
	}
	_, action, _ := strings.Cut(permission, ":")
	return a.Authorize(ctx, Request{Principal: p, Resource: ResourceRoute, Action: action, Target: permission}).Allow
}

// HeldRoutePermissions returns the route permissions the principal holds,
// each evaluated on its own so that a provider failure affects only that
// one (DeerFlow's resolve_route_permissions).
func (a *Authorizer) HeldRoutePermissions(ctx context.Context, p Principal) []string {
	var out []string
	for _, perm := range routePermissions() {
		if a.AllowRoute(ctx, p, perm) {
			out = append(out, perm)
		}
	}
	return out
}

// RouteDeniedMessage is DeerFlow's 403 detail for a route permission the
// caller lacks.
func RouteDeniedMessage(permission string) string { return "Permission denied: " + permission }

// ModelDeniedError is a run's explicit choice of a model its role may not
// use (the gateway answers 403 with its text; the CLI exits 2).
type ModelDeniedError struct{ Model string }

func (e *ModelDeniedError) Error() string {
	return fmt.Sprintf("Model '%s' is not available for your role", e.Model)
}

// ErrNoAuthorizedModel is DeerFlow's error when no configured model may be
// used by the role and fail_closed is on.
var ErrNoAuthorizedModel = errors.New("No models are authorized for the current role.") //lint:ignore ST1005 DeerFlow's message

// errModelProvider is DeerFlow's error when the provider fails while
// choosing a model and fail_closed is on.
var errModelProvider = errors.New("No models are authorized for the current role (authorization provider error).") //lint:ignore ST1005 DeerFlow's message

// AllowModel reports whether the principal may use a model (model:use).
// Off, every model is allowed; a provider failure denies when fail_closed.
func (a *Authorizer) AllowModel(ctx context.Context, p Principal, name string) bool {
	if !a.Enabled() {
		return true
	}
	return a.Authorize(ctx, modelUse(p, name)).Allow
}

func modelUse(p Principal, name string) Request {
	return Request{Principal: p, Resource: ResourceModel, Action: ActionUse, Target: name}
}

// ChooseModel enforces model:use on the model a run resolved by default
// (not chosen by the caller), as DeerFlow's _authorize_model_name: an
// allowed model is kept; a denied one falls back to the first of all
// that is visible and usable, with a warning. When none is, or the
// provider fails, it is ErrNoAuthorizedModel (or the provider-error
// variant) if fail_closed, else the model is kept with a warning.
func (a *Authorizer) ChooseModel(ctx context.Context, p Principal, name string, all []string) (string, error) {
	if !a.Enabled() {
		return name, nil
	}
	d, err := a.provider.Authorize(ctx, modelUse(p, name))
	if err == nil && d.Allow {
		return name, nil
	}
	if err != nil {
		a.logger.Warn(fmt.Sprintf("Authorization provider failed while checking model:use for '%s'", name), "err", err)
		return a.failModel(name, errModelProvider)
	}
	visible, err := a.provider.FilterResources(ctx, p, ResourceModel, append([]string(nil), all...))
	if err != nil {
		a.logger.Warn("Authorization provider failed while resolving allowed models", "err", err)
		return a.failModel(name, errModelProvider)
	}
	for _, c := range visible {
		if c == name {
			continue
		}
		d, err := a.provider.Authorize(ctx, modelUse(p, c))
		if err != nil {
			a.logger.Warn(fmt.Sprintf("Authorization provider failed while checking model:use fallback for '%s'", c), "err", err)
			return a.failModel(name, errModelProvider)
		}
		if d.Allow {
			a.logger.Warn(fmt.Sprintf("Model '%s' is not authorized for the current role; fallback to '%s'.", name, c))
			return c, nil
		}
	}
	if !a.failClosed {
		a.logger.Warn(fmt.Sprintf("No models are authorized for the current role; fail_open allows '%s'.", name))
	}
	return a.failModel(name, ErrNoAuthorizedModel)
}

func (a *Authorizer) failModel(name string, err error) (string, error) {
	if a.failClosed {
		return "", err
	}
	return name, nil
}
