package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestToolPolicy_defaultsAndRules(t *testing.T) {
	if got := mustParse(t, "config_version: 34\n", nil).ToolPolicy; got.Default != "allow" || len(got.Rules) != 0 {
		t.Errorf("absent section: %+v, want default allow and no rules", got)
	}
	src := "tool_policy:\n  default: ask\n  rules:\n" +
		"    - action: deny\n      command: 'rm -rf *'\n      reason: no recursive deletes\n" +
		"    - {action: allow, source: mcp, mcp_server: 'git*', annotations: {readOnlyHint: true}}\n"
	got := mustParse(t, src, nil).ToolPolicy
	want := ToolPolicy{Default: "ask", Rules: []ToolPolicyRule{
		{Action: "deny", Command: "rm -rf *", Reason: "no recursive deletes", Line: 4},
		{Action: "allow", Source: "mcp", MCPServer: "git*", Annotations: map[string]bool{"readOnlyHint": true}, Line: 7},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool_policy (-want +got):\n%s", diff)
	}
}

// TestToolPolicy_badRulesNameFileLineAndKey: a rule Antler cannot apply is
// a load error at its file, line and key, never a rule silently skipped.
func TestToolPolicy_badRulesNameFileLineAndKey(t *testing.T) {
	for _, tc := range []struct {
		name, rule, want string
	}{
		{"unknown action", "{action: block, tool: bash}", "config.yaml:3: tool_policy.rules[0].action: must be allow, ask or deny, got \"block\""},
		{"missing action", "{tool: bash}", "config.yaml:3: tool_policy.rules[0]: missing required key action"},
		{"no matcher", "{action: deny}", "config.yaml:3: tool_policy.rules[0]: needs at least one of tool, source"},
		{"unknown source", "{action: deny, source: plugin}", "config.yaml:3: tool_policy.rules[0].source: must be one of config, builtin, mcp, acp, got \"plugin\""},
		{"unknown annotation", "{action: deny, annotations: {dangerous: true}}", "config.yaml:3: tool_policy.rules[0].annotations.dangerous: unknown MCP tool annotation"},
		{"dangling escape", "{action: deny, tool: 'bash\\'}", "config.yaml:3: tool_policy.rules[0].tool: pattern \"bash\\\\\" ends with an escaping backslash"},
		{"blank command", "{action: deny, command: '  '}", "config.yaml:3: tool_policy.rules[0].command: must not be blank"},
		{"unknown key", "{action: deny, tools: bash}", "config.yaml:3: tool_policy.rules[0].tools: unknown key \"tools\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte("tool_policy:\n  rules:\n    - "+tc.rule+"\n"), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	_, err := Parse("config.yaml", []byte("tool_policy:\n  default: maybe\n"), nil)
	if want := "config.yaml:2: tool_policy.default: must be allow, ask or deny"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("bad default: error %v, want %q", err, want)
	}
}
