package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestToolsList_showsThePolicyAction: with a tool_policy, tools list shows
// each tool's action by its labels, and marks the tools whose calls agent
// or command rules decide otherwise.
func TestToolsList_showsThePolicyAction(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", `sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
tool_policy:
  default: ask
  rules:
    - {action: allow, source: builtin}
    - {action: deny, tool: ask_clarification, agent: intern}
`)
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var tools []toolJSON
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]string{}
	for _, tl := range tools {
		got[tl.Name] = tl.Policy
		if tl.PolicyVaries {
			got[tl.Name] += " (varies)"
		}
	}
	want := map[string]string{"present_files": "allow", "ask_clarification": "allow (varies)", "review_skill_package": "allow", "list_uploaded_files": "allow"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("policies (-want +got):\n%s", diff)
	}
	_, table, _ := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list")
	if !strings.Contains(table, "POLICY") || !strings.Contains(table, "allow (varies)") {
		t.Errorf("table lacks the policy column:\n%s", table)
	}
}
