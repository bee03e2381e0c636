package gateway

import (
	"fmt"
	"slices"
	"strings"
)

// defaultStdioAllowlist are the stdio MCP launchers an API-written server
// may use (DeerFlow's gateway routers); Options.StdioAllowlist extends it (DeerFlow's
// DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST).
var defaultStdioAllowlist = []string{"npx", "uvx"}

// execFlags make a launcher run code given on its command line.
var execFlags = []string{"-c", "--call", "-e", "--eval", "--print", "--shell", "--node-arg", "--node-options"}

// startupEnv are variables that run code when a process starts.
var startupEnv = []string{"BASH_ENV", "DYLD_INSERT_LIBRARIES", "ENV", "LD_AUDIT", "LD_PRELOAD", "NODE_OPTIONS",
	"PERL5OPT", "PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP", "RUBYOPT"}

// launchers are the allowlisted commands whose own options end at the
// first positional argument (the package they run).
var launchers = map[string]bool{"npx": true, "uvx": true}

// stdioServer is what the policy reads of a server.
type stdioServer struct {
	Type      string            `json:"type"`
	Transport string            `json:"transport"`
	Enabled   *bool             `json:"enabled"`
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
}

func (s *stdioServer) isStdio() bool {
	t := s.Type
	if t == "" {
		t = s.Transport
	}
	return t == "" || t == "stdio"
}

func (s *stdioServer) enabled() bool { return s.Enabled == nil || *s.Enabled }

// checkStdioPolicy returns DeerFlow's refusal text for a stdio server
// that the API may not write, or "".
func checkStdioPolicy(name string, s *stdioServer, allow []string) string {
	if !s.isStdio() {
		return ""
	}
	c := s.Command
	if c == "" || strings.ContainsAny(c, " \t;|&`$<>\n\r") {
		return fmt.Sprintf("MCP server '%s' command must be a single executable name; put parameters in args instead.", name)
	}
	if strings.ContainsAny(c, `/\`) || !slices.Contains(allow, c) {
		sorted := slices.Clone(allow)
		slices.Sort(sorted)
		sorted = slices.Compact(sorted)
		return fmt.Sprintf("MCP server '%s' uses disallowed stdio command '%s'. Allowed commands: %s. "+
			"Configure DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST to extend this list.", name, c, strings.Join(sorted, ", "))
	}
	for _, a := range s.Args {
		if launchers[c] && !strings.HasPrefix(a, "-") {
			break // the launcher's own options end at the package it runs
		}
		flag, _, _ := strings.Cut(a, "=")
		if slices.Contains(execFlags, flag) {
			return fmt.Sprintf("MCP server '%s' passes '%s' to '%s', which would run arbitrary code. "+
				"Point the server at a package or module instead.", name, flag, c)
		}
	}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if slices.Contains(startupEnv, strings.ToUpper(k)) {
			return fmt.Sprintf("MCP server '%s' sets environment variable '%s', which would run arbitrary code at process startup.", name, k)
		}
	}
	return ""
}
