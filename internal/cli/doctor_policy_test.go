package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDoctor_reportsThePolicyAndRulesThatMatchNoTool: doctor counts the
// tool_policy rules and warns, with file and line, of a rule no bound
// tool matches.
func TestDoctor_reportsThePolicyAndRulesThatMatchNoTool(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", `sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
tool_policy:
  default: ask
  rules:
    - {action: allow, tool: present_files}
    - {action: deny, tool: wirte_file}
`)
	_, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "doctor", "--json", "--timeout", "5s")
	var checks []check
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("%v: %s %s", err, out, errOut)
	}
	got := map[string]check{}
	for _, c := range checks {
		if c.Check == "tool_policy" {
			got[c.Name] = c
		}
	}
	if c := got[cfg]; c.Status != "ok" || c.Detail != "2 rules, default ask" {
		t.Errorf("policy line %+v", c)
	}
	if c := got["tool_policy.rules[1]"]; c.Status != "warn" || !strings.HasSuffix(c.Detail, "config.yaml:6: the rule matches no bound tool") {
		t.Errorf("unmatched rule line %+v", c)
	}
	if c, ok := got["tool_policy.rules[0]"]; ok {
		t.Errorf("a matching rule was reported: %+v", c)
	}
}
