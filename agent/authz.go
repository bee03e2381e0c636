package agent

import (
	"context"
	"maps"
	"slices"

	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// This file applies the authorization section (package authz) to the
// lead agent: the run's role, its model and its tools. Subagents filter
// their tools the same way (FilterEntries), with the role they inherit in
// the parent's runtime context.

// userRole is the role of a run: the request's, else the authorization
// section's default_role.
func (f *Factory) userRole(req Request) string {
	if req.UserRole != "" {
		return req.UserRole
	}
	if f.opts.Authorizer != nil {
		return f.opts.Authorizer.DefaultRole()
	}
	return f.opts.Config.Authorization.DefaultRole
}

// identity is the runtime context the principal of a run is built from:
// the request's context with the trusted user id and role.
func (f *Factory) identity(req Request) map[string]any {
	rc := maps.Clone(req.Context)
	if rc == nil {
		rc = map[string]any{}
	}
	rc[authz.ContextUserID], rc[authz.ContextUserRole] = req.UserID, f.userRole(req)
	return rc
}

// authorizeModel enforces model:use on the run's model: a model the
// request chose by name and the role may not use is an
// *authz.ModelDeniedError; a model it got by default (the custom agent's,
// the first configured) falls back to an allowed one as in DeerFlow.
func (f *Factory) authorizeModel(ctx context.Context, req Request, mcfg *config.Model) (*config.Model, error) {
	a := f.opts.Authorizer
	if !a.Enabled() {
		return mcfg, nil
	}
	p, err := a.Principal(f.identity(req))
	if err != nil {
		return nil, err
	}
	if req.ModelName == mcfg.Name {
		if !a.AllowModel(ctx, p, mcfg.Name) {
			return nil, &authz.ModelDeniedError{Model: mcfg.Name}
		}
		return mcfg, nil
	}
	names := make([]string, len(f.opts.Config.Models))
	for i, m := range f.opts.Config.Models {
		names[i] = m.Name
	}
	name, err := a.ChooseModel(ctx, p, mcfg.Name, names)
	if err != nil {
		return nil, err
	}
	m, _ := f.opts.Config.Model(name)
	return m, nil
}

// FilterEntries removes from entries, in place order kept, the tools the
// role of runtime context rc may not bind, by tool name (tools policies)
// and by MCP server (mcp_servers policies) (DeerFlow's Layer 1 filter,
// before deferred tools are set up, so that tool_search's catalogue holds
// only what the role may use). A nil or disabled authorizer keeps all.
func FilterEntries(ctx context.Context, a *authz.Authorizer, rc map[string]any, entries []toolset.Entry) []toolset.Entry {
	if !a.Enabled() {
		return entries
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Tool.Name
	}
	keep := map[string]bool{}
	for _, n := range a.VisibleTools(ctx, rc, names) {
		keep[n] = true
	}
	var servers []string
	for _, e := range entries {
		if s := e.Tool.Meta[tool.MetaMCPServer]; s != "" && !slices.Contains(servers, s) {
			servers = append(servers, s)
		}
	}
	keepServer := map[string]bool{}
	for _, s := range a.VisibleMCPServers(ctx, rc, servers) {
		keepServer[s] = true
	}
	out := entries[:0:0]
	for _, e := range entries {
		if s := e.Tool.Meta[tool.MetaMCPServer]; keep[e.Tool.Name] && (s == "" || keepServer[s]) {
			out = append(out, e)
		}
	}
	return out
}
