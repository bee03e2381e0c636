package agent

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/toolset"
)

// ResolveMCPPlugins maps the entries of an agent's mcp_plugins (a server
// name or DeerFlow's installation id of one, customagent.InstallationID)
// to server names among known,
// and returns the entries that name no known server.
func ResolveMCPPlugins(plugins, known []string) (servers, unknown []string) {
	for _, p := range plugins {
		switch {
		case slices.Contains(known, p):
			servers = append(servers, p)
		default:
			found := false
			for _, k := range known {
				if customagent.InstallationID(k) == p {
					servers, found = append(servers, k), true
					break
				}
			}
			if !found {
				unknown = append(unknown, p)
			}
		}
	}
	return servers, unknown
}

// BindAgentMCP keeps, of the MCP entries, those of the servers the custom
// agent binds (spec.MCPPlugins; nil keeps every one) narrowed to the
// tools of spec.MCPTools; other entries are kept. known lists the
// servers the user's runs see (nil: the check is skipped). An entry of
// mcp_plugins naming no known server, and a tool of mcp_tools no bound
// server has, is a warning naming the agent and the key: the run goes on
// with the servers that exist (the agent would otherwise be unable to run
// and so to fix itself through update_agent); the surfaces that write the
// config refuse such names. list_mcp_resources and read_mcp_resource,
// which reach every server, are left out when the agent binds a subset.
func BindAgentMCP(entries []toolset.Entry, spec *AgentSpec, known []string, logger *slog.Logger) []toolset.Entry {
	if spec == nil || (spec.MCPPlugins == nil && spec.MCPTools == nil) {
		return entries
	}
	bound := boundServers(entries, spec, known, logger) // nil: every server
	seen := map[string]bool{}
	out := make([]toolset.Entry, 0, len(entries))
	for _, e := range entries {
		if e.Source != toolset.SourceMCP {
			out = append(out, e)
			continue
		}
		server := e.Tool.Meta[mcptools.MetaServer]
		if server == "" { // the resource tools
			if bound == nil {
				out = append(out, e)
			}
			continue
		}
		if bound != nil && !slices.Contains(bound, server) {
			continue
		}
		if only, ok := spec.MCPTools[server]; ok {
			raw := e.Tool.Meta[mcptools.MetaTool]
			if !slices.Contains(only, raw) && !slices.Contains(only, e.Tool.Name) {
				continue
			}
			seen[server+"\x00"+raw] = true
			seen[server+"\x00"+e.Tool.Name] = true
		}
		out = append(out, e)
	}
	for server, only := range spec.MCPTools {
		for _, name := range only {
			if !seen[server+"\x00"+name] && (bound == nil || slices.Contains(bound, server)) && hasServer(entries, server) {
				logger.Warn(fmt.Sprintf("custom agent '%s': config.yaml: mcp_tools.%s names no tool of that server: %s", spec.Name, server, name))
			}
		}
	}
	return out
}

// boundServers resolves the agent's mcp_plugins against known (nil:
// against the servers of entries, without warnings); nil when the agent
// binds every server, an empty list when it binds none.
func boundServers(entries []toolset.Entry, spec *AgentSpec, known []string, logger *slog.Logger) []string {
	if spec.MCPPlugins == nil {
		return nil
	}
	check := known != nil
	if !check {
		for _, e := range entries {
			if s := e.Tool.Meta[mcptools.MetaServer]; s != "" && !slices.Contains(known, s) {
				known = append(known, s)
			}
		}
	}
	bound, unknown := ResolveMCPPlugins(spec.MCPPlugins, known)
	if check && len(unknown) > 0 {
		logger.Warn(fmt.Sprintf("custom agent '%s': config.yaml: mcp_plugins names no configured MCP server: %s (configured: %s); the agent runs without them",
			spec.Name, strings.Join(unknown, ", "), strings.Join(known, ", ")))
	}
	if bound == nil {
		bound = []string{}
	}
	return bound
}

// hasServer reports whether entries hold a tool of server (a server that
// is down is not reported for its missing tools).
func hasServer(entries []toolset.Entry, server string) bool {
	return slices.ContainsFunc(entries, func(e toolset.Entry) bool { return e.Tool.Meta[mcptools.MetaServer] == server })
}

// The runtime context keys that carry a custom agent's MCP choice to its
// subagents (the task tool copies the parent's context).
const (
	ContextMCPPlugins = "mcp_plugins"
	ContextMCPTools   = "mcp_tools"
)

// setMCPContext puts the agent's MCP choice into the runtime context
// and, as DeerFlow does for mcp_plugins, the run metadata.
func setMCPContext(rc, meta map[string]any, spec *AgentSpec) {
	if spec == nil {
		return
	}
	if spec.MCPPlugins != nil {
		rc[ContextMCPPlugins] = slices.Clone(spec.MCPPlugins)
		meta[ContextMCPPlugins] = slices.Clone(spec.MCPPlugins)
	}
	if spec.MCPTools != nil {
		rc[ContextMCPTools] = spec.MCPTools
	}
}

// MCPSpecFromContext returns the MCP choice a parent run put into its
// runtime context (name, MCPPlugins and MCPTools set), nil when it put
// none: the subagent executor applies it with BindAgentMCP, so that a
// task never reaches a server its agent does not bind.
func MCPSpecFromContext(rc map[string]any) *AgentSpec {
	plugins, hasP := stringsOf(rc[ContextMCPPlugins])
	var tools map[string][]string
	switch v := rc[ContextMCPTools].(type) {
	case map[string][]string:
		tools = v
	case map[string]any:
		tools = make(map[string][]string, len(v))
		for k, list := range v {
			tools[k], _ = stringsOf(list)
		}
	}
	if !hasP && tools == nil {
		return nil
	}
	name, _ := rc["agent_name"].(string)
	return &AgentSpec{Name: name, MCPPlugins: plugins, MCPTools: tools}
}

// stringsOf reads a list of strings as []string or []any (after JSON).
func stringsOf(v any) ([]string, bool) {
	switch l := v.(type) {
	case []string:
		return l, true
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out, true
	}
	return nil, false
}
