package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// This file is the command line's side of per-user MCP servers
// (config.UserMCP): `antler mcp add|remove|list|get --user NAME` act on
// that user's file in the home ({home}/users/NAME/mcp_config.json) or
// show that user's view, and the app's runs, tools list and gateway read
// the same files.

// userFlagSet reports whether the global --user was given: the mcp
// commands then act on that user's own servers.
func userFlagSet(c *cobra.Command) bool {
	f := c.Flag("user")
	return f != nil && f.Changed
}

// cliUserMCPFiles returns the users' MCP files of the home the flags
// name, for the mcp commands (which build no app).
func cliUserMCPFiles(g *globals) (*config.UserMCPFiles, error) {
	p, err := config.ResolvePaths(g.config, g.extensions, g.home, g.opts.Getenv)
	if err != nil {
		return nil, err
	}
	home, err := filepath.Abs(p.Home)
	if err != nil {
		return nil, err
	}
	layout, err := vpath.New(vpath.Options{Home: home})
	if err != nil {
		return nil, err
	}
	return &config.UserMCPFiles{Dir: layout.UserDir}, nil
}

// loadCLIUserMCP reads --user's MCP file.
func loadCLIUserMCP(g *globals) (*config.UserMCP, error) {
	files, err := cliUserMCPFiles(g)
	if err != nil {
		return nil, err
	}
	return files.Load(g.user)
}

// sharedExtensionsForUser loads the shared extensions file, an empty
// configuration when there is none yet (a user may add servers first).
func sharedExtensionsForUser(g *globals) (*config.Extensions, error) {
	ext, err := loadMCPExtensions(g)
	var ce *config.Error
	if err != nil && errors.As(err, &ce) && ce.Line == 0 && strings.Contains(ce.Msg, "file not found") {
		return &config.Extensions{MCPServers: map[string]config.MCPServer{}}, nil
	}
	return ext, err
}

// loadMCPView is the servers `mcp list` and `mcp get` show: the shared
// ones, or with --user that user's view (the shared servers with the
// user's credentials applied, and the user's own), its warnings printed.
func loadMCPView(c *cobra.Command, g *globals) (*config.Extensions, error) {
	if !userFlagSet(c) {
		return loadMCPExtensions(g)
	}
	ext, err := sharedExtensionsForUser(g)
	if err != nil {
		return nil, err
	}
	u, err := loadCLIUserMCP(g)
	if err != nil {
		return nil, err
	}
	view := u.View(ext)
	for _, w := range view.Warnings[len(ext.Warnings):] {
		fmt.Fprintln(c.ErrOrStderr(), "warning: "+w)
	}
	return view, nil
}

// ownServerFile returns view with the path of --user's file when name is
// one of that user's own servers (mcp get reads the entry as written
// there), view itself otherwise.
func ownServerFile(c *cobra.Command, g *globals, view *config.Extensions, name string) *config.Extensions {
	if !userFlagSet(c) {
		return view
	}
	u, err := loadCLIUserMCP(g)
	if err != nil {
		return view
	}
	if _, own := u.MCPServers[name]; !own {
		return view
	}
	if _, shared := view.MCPServers[name]; !shared {
		return view
	}
	cp := *view
	cp.Path = u.Path
	return &cp
}

// runMCPAddUser is `antler mcp add --user USER NAME ...`: NAME a shared
// server and only --header/--env given sets the user's values for its
// secrets; otherwise NAME becomes one of the user's own servers.
func runMCPAddUser(c *cobra.Command, g *globals, f *mcpAddFlags, args []string) error {
	name := args[0]
	for _, l := range []struct {
		list []string
		sep  string
	}{{f.env, "="}, {f.headers, ":"}} {
		for _, v := range l.list {
			if _, val, _ := strings.Cut(v, l.sep); strings.HasPrefix(strings.TrimSpace(val), "$") {
				return usageErrorf("%q: a user's MCP file does not resolve $VAR (the environment is the operator's, not the user's); give the value itself", v)
			}
		}
	}
	shared, err := sharedExtensionsForUser(g)
	if err != nil {
		return err
	}
	files, err := cliUserMCPFiles(g)
	if err != nil {
		return err
	}
	path, err := files.Path(g.user)
	if err != nil {
		return err
	}
	if s, ok := shared.MCPServers[name]; ok {
		return addUserCredential(c, g, f, files, s, args, path)
	}
	entry, err := f.entry(c, args)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(entry)
	one, _ := json.Marshal(map[string]any{"mcpServers": map[string]json.RawMessage{name: raw}})
	parsed, err := config.ParseUserMCP(path, one)
	if err != nil {
		return err
	}
	if p := parsed.MCPServers[name]; p.Enabled && p.Err != nil {
		return usageErrorf("server %q: %v", name, p.Err)
	}
	_, err = files.Edit(g.user, func(d *config.UserMCPDoc) error {
		if _, dup := d.MCPServers[name]; dup {
			return usageErrorf("%s: user %s already has an MCP server %q: remove it first (antler mcp remove --user %s %s)", path, g.user, name, g.user, name)
		}
		d.MCPServers[name] = raw
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.OutOrStdout(), "Added %s MCP server %q for user %s to %s\n", entry.Type, name, g.user, path)
	return nil
}

// addUserCredential sets the user's values for headers or env keys of the
// shared server s (merged into the values already set).
func addUserCredential(c *cobra.Command, g *globals, f *mcpAddFlags, files *config.UserMCPFiles, s config.MCPServer, args []string, path string) error {
	if len(args) > 1 || f.description != "" || f.disabled || c.Flags().Changed("transport") {
		return usageErrorf("%q is a shared MCP server: with --user, give only --header or --env values for it (the user's own values for its secrets)", s.Name)
	}
	headers, err := pairs("--header", f.headers, ":")
	if err != nil {
		return err
	}
	env, err := pairs("--env", f.env, "=")
	if err != nil {
		return err
	}
	if len(headers) == 0 && len(env) == 0 {
		return usageErrorf("%q is a shared MCP server: give --header or --env values for it", s.Name)
	}
	_, err = files.Edit(g.user, func(d *config.UserMCPDoc) error {
		cred := d.Credentials[s.Name]
		cred.Headers = mergeValues(cred.Headers, headers)
		cred.Env = mergeValues(cred.Env, env)
		if _, err := s.WithCredentials(cred); err != nil {
			return usageErrorf("%v", err)
		}
		d.Credentials[s.Name] = cred
		return nil
	})
	if err != nil {
		return err
	}
	keys := append(slices.Sorted(maps.Keys(headers)), slices.Sorted(maps.Keys(env))...)
	fmt.Fprintf(c.OutOrStdout(), "Set user %s's values of %s for shared MCP server %q in %s\n", g.user, strings.Join(keys, ", "), s.Name, path)
	return nil
}

func mergeValues(old, add map[string]string) map[string]string {
	if len(add) == 0 {
		return old
	}
	out := maps.Clone(old)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, add)
	return out
}

// runMCPRemoveUser is `antler mcp remove --user USER NAME`: removes the
// user's own server NAME, or the user's values for the shared server NAME.
func runMCPRemoveUser(c *cobra.Command, g *globals, name string) error {
	files, err := cliUserMCPFiles(g)
	if err != nil {
		return err
	}
	path, err := files.Path(g.user)
	if err != nil {
		return err
	}
	what := ""
	_, err = files.Edit(g.user, func(d *config.UserMCPDoc) error {
		switch {
		case d.MCPServers[name] != nil:
			delete(d.MCPServers, name)
			what = "MCP server"
		case hasCredential(d, name):
			delete(d.Credentials, name)
			what = "values for shared MCP server"
		default:
			own := "none"
			if len(d.MCPServers) > 0 {
				own = strings.Join(slices.Sorted(maps.Keys(d.MCPServers)), ", ")
			}
			return usageErrorf("%s: user %s has no MCP server %q and no values for a shared server of that name (own servers: %s)",
				path, g.user, name, own)
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.OutOrStdout(), "Removed user %s's %s %q from %s\n", g.user, what, name, path)
	return nil
}

func hasCredential(d *config.UserMCPDoc, name string) bool {
	_, ok := d.Credentials[name]
	return ok
}

// mcpServerNames returns the MCP servers user's runs see, sorted: the
// shared ones and the user's own (agent.FactoryOptions.MCPServerNames,
// update_agent's check).
func (a *app) mcpServerNames(user string) []string {
	ext, _, _ := a.extensionsSource().Get()
	u, err := a.userMCP.Load(user)
	if err != nil {
		u = nil // a file that does not load costs the user its servers (warned by the runs)
	}
	return u.View(ext).ServerNames()
}

// ToolsFor serves the tools of a user's view (toolset.UserMCPSource).
func (s mcpSourceWithProgress) ToolsFor(ctx context.Context, user string) ([]*tool.Tool, error) {
	defer s.p.done()
	return s.m.ToolsFor(ctx, user)
}
