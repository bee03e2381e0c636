package toolpolicy

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

func TestPolicy_forToolAndUnmatchedRules(t *testing.T) {
	p := mustNew(t, "allow",
		config.ToolPolicyRule{Action: "ask", Tool: "write_file"},
		config.ToolPolicyRule{Action: "deny", Command: "rm *"},
		config.ToolPolicyRule{Action: "deny", MCPServer: "github"},
		config.ToolPolicyRule{Action: "ask", Tool: "wirte_file"},
		config.ToolPolicyRule{Action: "ask", Tool: "ls", Agent: "intern"},
	)
	tools := []*tool.Tool{
		{Name: "write_file", Meta: map[string]string{tool.MetaSource: "config"}},
		{Name: "bash", Meta: map[string]string{tool.MetaSource: "config"}},
		{Name: "ls", Meta: map[string]string{tool.MetaSource: "config"}},
		{Name: "fs_read", Meta: map[string]string{tool.MetaSource: "mcp", tool.MetaMCPServer: "fs"}},
	}
	type got struct {
		Action Action
		Varies bool
	}
	want := map[string]got{"write_file": {ActionAsk, false}, "bash": {ActionAllow, true}, "ls": {ActionAllow, true}, "fs_read": {ActionAllow, false}}
	have := map[string]got{}
	for _, tl := range tools {
		a, v := p.ForTool(tl.Name, tl.Meta)
		have[tl.Name] = got{a, v}
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("ForTool (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tool_policy.rules[2]", "tool_policy.rules[3]"}, p.Unmatched(tools)); diff != "" {
		t.Errorf("Unmatched (-want +got):\n%s", diff)
	}
}
