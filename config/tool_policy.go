package config

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ToolPolicy is Antler's own tool_policy section (DeerFlow has none): rules
// that allow a tool call, refuse it, or ask a human before it runs
// (package toolpolicy decides; the approval flow asks). Among all the rules
// that match a call, deny beats ask and ask beats allow; when none matches,
// Default decides. See docs/differences.md, "Approval before dangerous
// tools".
//
//	tool_policy:
//	  default: allow
//	  rules:
//	    - {action: deny, command: "rm -rf *", reason: "no recursive deletes"}
//	    - {action: ask, tool: write_file}
//	    - {action: ask, source: mcp, annotations: {destructiveHint: true}}
type ToolPolicy struct {
	// Default is the action of a call no rule matches: allow (the
	// default), ask or deny.
	Default string `yaml:"default"`
	// Rules are matched against every call; a rule matches when all of its
	// matchers do.
	Rules []ToolPolicyRule `yaml:"rules"`
}

// ToolPolicyRule is one entry of tool_policy.rules. At least one matcher
// (tool, source, mcp_server, agent, annotations, command) is required.
type ToolPolicyRule struct {
	// Action is allow, ask or deny.
	Action string `yaml:"action"`
	// Reason is shown to the human who is asked and, on deny, to the model.
	Reason string `yaml:"reason"`
	// Tool is a glob on the tool name ("*" any run of characters, "?" one,
	// "\" escapes). With command and no tool, the rule is for "bash".
	Tool string `yaml:"tool"`
	// Source is where the tool comes from: config, builtin, mcp or acp.
	Source string `yaml:"source"`
	// MCPServer is a glob on the MCP server's name in extensions_config.json.
	MCPServer string `yaml:"mcp_server"`
	// Agent is a glob on the custom agent's name ("" matches any agent; the
	// default agent's name is "").
	Agent string `yaml:"agent"`
	// Annotations match MCP tool annotations (destructiveHint, readOnlyHint,
	// openWorldHint, idempotentHint) to true or false; an annotation a
	// server leaves out has the MCP specification's default. They never
	// match a tool that is not an MCP tool.
	Annotations map[string]bool `yaml:"annotations"`
	// Command is a pattern matched against each command of the parsed
	// command line (words joined by one space; "*" any run of characters,
	// a trailing " *" or ":*" also matches no more words).
	Command string `yaml:"command"`
	Line    int    `yaml:"-"` // line of the entry in the file
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (r *ToolPolicyRule) UnmarshalYAML(n *yaml.Node) error {
	type plain ToolPolicyRule
	v := plain{}
	if err := n.Decode(&v); err != nil {
		return err
	}
	v.Line = n.Line
	*r = ToolPolicyRule(v)
	return nil
}

// ToolPolicyActions are the actions of tool_policy.
func ToolPolicyActions() []string { return []string{"allow", "ask", "deny"} }

// ToolPolicySources are the tool sources tool_policy rules name.
func ToolPolicySources() []string { return []string{"config", "builtin", "mcp", "acp"} }

// ToolPolicyAnnotations are the MCP tool annotations tool_policy rules
// match.
func ToolPolicyAnnotations() []string {
	return []string{"destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint"}
}

func defaultToolPolicy() ToolPolicy { return ToolPolicy{Default: "allow"} }

// HasMatcher reports whether the rule has at least one matcher.
func (r ToolPolicyRule) HasMatcher() bool {
	return r.Tool != "" || r.Source != "" || r.MCPServer != "" || r.Agent != "" || len(r.Annotations) > 0 || r.Command != ""
}

// CheckToolPolicyPattern returns what is wrong with a glob of tool_policy
// ("" when it is valid): a pattern must not end in an escaping backslash.
func CheckToolPolicyPattern(pattern string) string {
	n := len(pattern) - len(strings.TrimRight(pattern, `\`))
	if n%2 == 1 {
		return "ends with an escaping backslash"
	}
	return ""
}

func (p *parser) validateToolPolicy() {
	tp := &p.cfg.ToolPolicy
	if tp.Default == "" {
		tp.Default = "allow"
	}
	if !slices.Contains(ToolPolicyActions(), tp.Default) {
		p.invalid("tool_policy.default", "must be allow, ask or deny, got %q", tp.Default)
	}
	for i, r := range tp.Rules {
		at := indexKey("tool_policy.rules", i)
		switch {
		case r.Action == "":
			p.invalid(at, "missing required key action (allow, ask or deny)")
		case !slices.Contains(ToolPolicyActions(), r.Action):
			p.invalid(joinKey(at, "action"), "must be allow, ask or deny, got %q", r.Action)
		}
		if !r.HasMatcher() {
			p.invalid(at, "needs at least one of tool, source, mcp_server, agent, annotations, command (use tool_policy.default for every call)")
		}
		if r.Source != "" && !slices.Contains(ToolPolicySources(), r.Source) {
			p.invalid(joinKey(at, "source"), "must be one of %s, got %q", strings.Join(ToolPolicySources(), ", "), r.Source)
		}
		for _, k := range sortedKeys(r.Annotations) {
			if !slices.Contains(ToolPolicyAnnotations(), k) {
				p.invalid(joinKey(joinKey(at, "annotations"), k), "unknown MCP tool annotation (known: %s)", strings.Join(ToolPolicyAnnotations(), ", "))
			}
		}
		for _, f := range []struct{ key, v string }{{"tool", r.Tool}, {"mcp_server", r.MCPServer}, {"agent", r.Agent}, {"command", r.Command}} {
			if msg := CheckToolPolicyPattern(f.v); msg != "" {
				p.invalid(joinKey(at, f.key), "pattern %q %s", f.v, msg)
			}
		}
		if r.Command != "" && strings.TrimSpace(r.Command) == "" {
			p.invalid(joinKey(at, "command"), "must not be blank")
		}
	}
}
