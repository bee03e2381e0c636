package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tailscale/hujson"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
)

// mcpEntry is a server `antler mcp add` writes, its keys in this order.
type mcpEntry struct {
	Enabled     bool              `json:"enabled"`
	Type        string            `json:"type"`
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	URL         string            `json:"url,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Description string            `json:"description,omitempty"`
}

// mcpAddFlags are the flags of `antler mcp add`.
type mcpAddFlags struct {
	transport   string
	env         []string
	headers     []string
	description string
	disabled    bool
}

func newMCPAddCmd(g *globals) *cobra.Command {
	var f mcpAddFlags
	c := &cobra.Command{
		Use:   "add [flags] NAME -- COMMAND [ARGS...] | add --transport http|sse NAME URL",
		Short: "Add an MCP server to extensions_config.json",
		Long: `Add an MCP server to mcpServers in extensions_config.json (the file the
global --extensions names, else the one beside config.yaml, created if
missing). A stdio server is the command after "--" and its arguments; an
http or sse server is a URL. The file is rewritten atomically and keeps
every other key, including keys Antler does not know, and its formatting.

Values of --env and --header are written as given. A value "$NAME" is
resolved from the environment (or the .env beside config.yaml) when the
file is loaded, which keeps the secret out of the file.

With --user USER the server is that user's own, seen only by that user's
runs: it goes to the user's file in the home (users/USER/mcp_config.json,
mode 0600), where no "$NAME" is resolved. When NAME is a shared server of
extensions_config.json, --user with only --header or --env values sets
that user's own values for those of its secrets (keys the shared server
declares), so that the one shared definition serves each user with the
user's credentials. "antler mcp remove --user USER NAME" undoes either.

Examples:
  antler mcp add memory -- npx -y @modelcontextprotocol/server-memory
  antler mcp add github -e 'GITHUB_TOKEN=$GITHUB_TOKEN' -- npx -y @modelcontextprotocol/server-github
  antler mcp add --transport http docs https://example.com/mcp -H 'Authorization: Bearer $DOCS_TOKEN'
  antler mcp add --user alice --transport http notes https://notes.example/mcp -H 'Authorization: Bearer s3cret'
  antler mcp add --user alice github -H 'Authorization: Bearer ghp_alice'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runMCPAdd(c, g, &f, args)
		},
	}
	fs := c.Flags()
	fs.StringVarP(&f.transport, "transport", "t", "stdio", "stdio, http or sse")
	fs.StringArrayVarP(&f.env, "env", "e", nil, "environment variable of a stdio server, KEY=VALUE (repeatable)")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "HTTP header of an http or sse server, 'Name: value' (repeatable)")
	fs.StringVar(&f.description, "description", "", "description shown to operators and in routing hints")
	fs.BoolVar(&f.disabled, "disabled", false, "add the server with enabled: false")
	return c
}

func runMCPAdd(c *cobra.Command, g *globals, f *mcpAddFlags, args []string) error {
	name := args[0]
	if !mcptools.ValidName(name) {
		return usageErrorf("NAME %q: use letters, digits, '-' and '_' (at most 64)", name)
	}
	if userFlagSet(c) {
		return runMCPAddUser(c, g, f, args) // mcp_user.go
	}
	entry, err := f.entry(c, args)
	if err != nil {
		return err
	}
	path, err := mcpExtensionsPath(g, true)
	if err != nil {
		return err
	}
	if err := checkEntry(path, name, entry); err != nil {
		return err
	}
	ef, err := readExtFile(path)
	if err != nil {
		return err
	}
	if err := ef.addServer(name, entry); err != nil {
		return err
	}
	if err := ef.save(); err != nil {
		return err
	}
	fmt.Fprintf(c.OutOrStdout(), "Added %s MCP server %q to %s\n", entry.Type, name, path)
	warnIfUnloadable(c, path)
	return nil
}

// entry builds the server from the flags and the arguments after NAME.
func (f *mcpAddFlags) entry(c *cobra.Command, args []string) (mcpEntry, error) {
	e := mcpEntry{Enabled: !f.disabled, Type: f.transport, Description: f.description}
	rest := args[1:]
	switch f.transport {
	case "stdio":
		if len(f.headers) > 0 {
			return e, usageErrorf("--header is for http and sse servers; a stdio server takes --env")
		}
		if dash := c.ArgsLenAtDash(); dash > 1 {
			return e, usageErrorf("give NAME only before \"--\" (got %q): antler mcp add NAME -- COMMAND [ARGS...]", args[1:dash])
		}
		if len(rest) == 0 {
			return e, usageErrorf("a stdio server needs a command: antler mcp add NAME -- COMMAND [ARGS...]")
		}
		e.Command, e.Args = rest[0], rest[1:]
		env, err := pairs("--env", f.env, "=")
		if err != nil {
			return e, err
		}
		e.Env = env
	case "http", "sse":
		if len(f.env) > 0 {
			return e, usageErrorf("--env is for stdio servers; an %s server takes --header", f.transport)
		}
		if len(rest) != 1 {
			return e, usageErrorf("an %s server needs exactly one URL after NAME (got %d arguments)", f.transport, len(rest))
		}
		e.URL = rest[0]
		headers, err := pairs("--header", f.headers, ":")
		if err != nil {
			return e, err
		}
		e.Headers = headers
	default:
		return e, usageErrorf("--transport: %q is not one of stdio, http, sse", f.transport)
	}
	return e, nil
}

// pairs splits each "KEY<sep>VALUE" (spaces around a ':' separator
// trimmed); a repeated key is an error.
func pairs(flag string, list []string, sep string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(list))
	for _, p := range list {
		k, v, ok := strings.Cut(p, sep)
		if sep == ":" {
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		}
		if !ok || k == "" {
			return nil, usageErrorf("%s %q: want KEY%sVALUE", flag, p, sep)
		}
		if _, dup := out[k]; dup {
			return nil, usageErrorf("%s: %s given twice", flag, k)
		}
		out[k] = v
	}
	return out, nil
}

// checkEntry parses the new server alone, as the loader will, so that a
// server Antler would refuse is not written.
func checkEntry(path, name string, e mcpEntry) error {
	ef := &extFile{path: path, root: hujson.Value{Value: &hujson.Object{}}}
	if err := ef.addServer(name, e); err != nil {
		return err
	}
	ext, err := config.ParseExtensions(path, ef.bytes(), func(string) (string, bool) { return "set", true })
	if err != nil {
		return err
	}
	if s := ext.MCPServers[name]; s.Err != nil {
		return usageErrorf("server %q: %v", name, s.Err)
	}
	return nil
}

// warnIfUnloadable says so when the edited file does not load (a problem
// elsewhere in it, which the edit kept as it was).
func warnIfUnloadable(c *cobra.Command, path string) {
	if _, err := config.LoadExtensions(path); err != nil {
		fmt.Fprintf(c.ErrOrStderr(), "warning: %s does not load as it is: %s\n", path, oneLine(err))
	}
}

func newMCPRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:               "remove NAME",
		Short:             "Remove an MCP server from extensions_config.json",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServerNames(g),
		RunE: func(c *cobra.Command, args []string) error {
			if userFlagSet(c) {
				return runMCPRemoveUser(c, g, args[0]) // mcp_user.go
			}
			path, _, err := editExistingExtFile(g, func(ef *extFile) (bool, error) {
				return true, ef.removeServer(args[0])
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Removed MCP server %q from %s\n", args[0], path)
			return nil
		},
	}
}

func newMCPEnableCmd(g *globals, on bool) *cobra.Command {
	verb, short := "enable", "Set enabled: true on an MCP server"
	if !on {
		verb, short = "disable", "Set enabled: false on an MCP server (its config is kept)"
	}
	return &cobra.Command{
		Use:               verb + " NAME",
		Short:             short,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServerNames(g),
		RunE: func(c *cobra.Command, args []string) error {
			path, changed, err := editExistingExtFile(g, func(ef *extFile) (bool, error) {
				return ef.setEnabled(args[0], on)
			})
			if err != nil {
				return err
			}
			if !changed {
				fmt.Fprintf(c.OutOrStdout(), "MCP server %q is already %sd in %s\n", args[0], verb, path)
				return nil
			}
			fmt.Fprintf(c.OutOrStdout(), "MCP server %q %sd in %s\n", args[0], verb, path)
			return nil
		},
	}
}

// editExistingExtFile applies edit to the existing extensions file and
// saves it when edit reports a change; it returns the file's path.
func editExistingExtFile(g *globals, edit func(*extFile) (changed bool, err error)) (path string, changed bool, err error) {
	path, err = mcpExtensionsPath(g, false)
	if err != nil {
		return "", false, err
	}
	ef, err := readExtFile(path)
	if err != nil {
		return "", false, err
	}
	if changed, err = edit(ef); err != nil || !changed {
		return path, false, err
	}
	return path, true, ef.save()
}

// mcpExtensionsPath resolves the extensions file as every command does
// (--extensions, $ANTLER_EXTENSIONS_CONFIG, $DEER_FLOW_EXTENSIONS_CONFIG_PATH,
// beside config.yaml). With create, a file that does not exist yet is
// named beside config.yaml; without, its absence is an error.
func mcpExtensionsPath(g *globals, create bool) (string, error) {
	p, err := config.ResolvePaths(g.config, g.extensions, g.home, g.opts.Getenv)
	if err != nil {
		return "", err
	}
	if p.Extensions != "" {
		return p.Extensions, nil
	}
	beside := filepath.Join(filepath.Dir(p.Config), "extensions_config.json")
	if create {
		return beside, nil
	}
	return "", &config.Error{File: beside, Msg: "file not found (add a server with antler mcp add, or pass --extensions)"}
}

// completeServerNames completes the names of mcpServers.
func completeServerNames(g *globals) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		path, err := mcpExtensionsPath(g, false)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ef, err := readExtFile(path)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		obj, _ := ef.servers(false)
		var names []string
		if obj != nil {
			for _, m := range obj.Members {
				names = append(names, memberName(m))
			}
		}
		slices.Sort(names)
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
