// Package authz is DeerFlow's pluggable fine-grained authorization
// (DeerFlow's deerflow/authz): a [Provider] decides what a [Principal]
// (a user id and a role) may do with a resource (a tool, a model, a
// gateway route), and an [Authorizer] applies the authorization section's
// fail_closed and default_role to every decision.
//
// One policy is enforced at two layers, as in DeerFlow: the tools a role
// may never use are removed before an agent binds them
// ([Authorizer.Visible], so the model never sees them and tool_search
// cannot promote them), and every call is checked again before it runs
// ([Authorizer.ToolMiddleware]). The gateway checks route permissions
// ([Authorizer.RoutePermissions]) and model choices ([Authorizer.AllowModel]).
//
// The built-in provider is DeerFlow's RBAC ([NewRBAC], use string
// deerflow.authz.rbac:RbacAuthorizationProvider). A program that embeds
// Antler passes its own providers as [Factory] values keyed by use string
// (Options.Providers); there is no registry to register into. See
// docs/differences.md, "Authorization".
package authz
