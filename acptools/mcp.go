package acptools

import (
	"fmt"
	"maps"
	"slices"

	acp "github.com/coder/acp-go-sdk"

	"github.com/antlerhq/antler/config"
)

// mcpServers converts the enabled MCP servers of ext into the list that
// session/new carries, sorted by server name: stdio servers as
// {name, command, args, env: [{name, value}]}, http and sse servers as
// {name, type, url, headers: [{name, value}]}, with args, env and headers
// always present (an empty list rather than null) and variables and
// headers sorted by name. Disabled servers are left out.
//
// Any enabled server that cannot be expressed (an error recorded by
// package config, such as a stdio server without a command, an http
// server without a url, an unsupported transport or a missing $VAR)
// makes the whole conversion fail, as DeerFlow's does; the caller then
// sends an empty list. A nil ext yields an empty list.
func mcpServers(ext *config.Extensions) ([]acp.McpServer, error) {
	out := []acp.McpServer{}
	if ext == nil {
		return out, nil
	}
	for _, s := range ext.EnabledServers() {
		if s.Err != nil {
			return nil, fmt.Errorf("MCP server '%s': %w", s.Name, s.Err)
		}
		switch s.Type {
		case "", "stdio":
			if s.Command == "" {
				return nil, fmt.Errorf("MCP server '%s' with stdio transport requires 'command' field", s.Name)
			}
			env := []acp.EnvVariable{}
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				env = append(env, acp.EnvVariable{Name: k, Value: s.Env[k]})
			}
			out = append(out, acp.McpServer{Stdio: &acp.McpServerStdio{
				Name: s.Name, Command: s.Command, Args: append([]string{}, s.Args...), Env: env,
			}})
		case "http", "sse":
			if s.URL == "" {
				return nil, fmt.Errorf("MCP server '%s' with %s transport requires 'url' field", s.Name, s.Type)
			}
			headers := []acp.HttpHeader{}
			for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
				headers = append(headers, acp.HttpHeader{Name: k, Value: s.Headers[k]})
			}
			if s.Type == "http" {
				out = append(out, acp.McpServer{Http: &acp.McpServerHttpInline{Name: s.Name, Type: "http", Url: s.URL, Headers: headers}})
			} else {
				out = append(out, acp.McpServer{Sse: &acp.McpServerSseInline{Name: s.Name, Type: "sse", Url: s.URL, Headers: headers}})
			}
		default:
			return nil, fmt.Errorf("MCP server '%s' has unsupported transport type: %s", s.Name, s.Type)
		}
	}
	return out, nil
}
