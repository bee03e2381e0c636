package toolset_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// TestAssemble_labelsEveryToolWithItsSource: each bound tool carries its
// source in Meta (for the tool policy), on a copy: the tools the sources
// made keep their own Meta.
func TestAssemble_labelsEveryToolWithItsSource(t *testing.T) {
	mcpTool := fakeTool("srv_a")
	mcpTool.Meta = map[string]string{tool.MetaMCPServer: "srv", tool.MetaMCPAnnotationPrefix + "readOnlyHint": "true"}
	acp := fakeTool("invoke_acp_agent")
	a := &toolset.Assembler{
		Registry: fakeRegistry(nil),
		Env:      &toolset.Env{Config: mustConfig(t, baseConfig+"tools:\n  - {name: ls, group: file, use: 'fake:ls'}\nacp_agents:\n  coder: {command: c, description: d}\n")},
		Builtins: allBuiltins,
		MCP:      &fakeMCP{tools: []*tool.Tool{mcpTool}},
		ACP:      func(context.Context, *config.Config) (*tool.Tool, error) { return acp, nil },
	}
	ts, err := a.Assemble(t.Context(), toolset.Options{IncludeMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	ts.Add(toolset.SourceBuiltin, "builtin", fakeTool("tool_search"))
	got := map[string]string{}
	for _, e := range ts.Entries {
		got[e.Tool.Name] = e.Tool.Meta[tool.MetaSource]
	}
	want := map[string]string{"ls": "config", "present_files": "builtin", "ask_clarification": "builtin",
		"srv_a": "mcp", "invoke_acp_agent": "acp", "tool_search": "builtin"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	if e, _ := ts.Lookup("srv_a"); e.Tool.Meta[tool.MetaMCPServer] != "srv" || e.Tool.Meta[tool.MetaMCPAnnotationPrefix+"readOnlyHint"] != "true" {
		t.Errorf("MCP labels lost: %v", e.Tool.Meta)
	}
	if _, ok := mcpTool.Meta[tool.MetaSource]; ok || acp.Meta != nil || allBuiltins.PresentFiles.Meta != nil {
		t.Errorf("a source's tool was changed: %v %v %v", mcpTool.Meta, acp.Meta, allBuiltins.PresentFiles.Meta)
	}
}
