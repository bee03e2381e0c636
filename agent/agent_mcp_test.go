package agent_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/toolset"
)

// An agent bound to server A does not see server B's tools; the lead
// agent keeps every server; mcp_tools narrows a server to some tools.
func TestFactoryBindsAgentMCPServers(t *testing.T) {
	cfg, err := config.Parse("config.yaml", []byte(factoryConfig), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	resources := textTool("list_mcp_resources", "ok")
	resources.Meta = map[string]string{"source": "mcp"}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	asm := &toolset.Assembler{Registry: testRegistry(), Env: &toolset.Env{Config: cfg}, Logger: logger,
		Builtins: toolset.Builtins{PresentFiles: textTool("present_files", "ok"), AskClarification: builtin.AskClarification()},
		MCP:      staticMCP{mcpTool("a", "one", "A one."), mcpTool("a", "two", "A two."), mcpTool("b", "three", "B three."), resources}}
	specs := agents{
		"only-a":     {Name: "only-a", ToolGroups: []string{}, MCPPlugins: []string{"a"}},
		"none":       {Name: "none", ToolGroups: []string{}, MCPPlugins: []string{}},
		"a-two":      {Name: "a-two", ToolGroups: []string{}, MCPPlugins: []string{"a", "b"}, MCPTools: map[string][]string{"a": {"two"}}},
		"deerflow":   {Name: "deerflow", ToolGroups: []string{}, MCPPlugins: []string{customagent.InstallationID("b")}},
		"gone":       {Name: "gone", ToolGroups: []string{}, MCPPlugins: []string{"a", "removed"}},
		"every-tool": {Name: "every-tool", ToolGroups: []string{}},
	}
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm, Agents: specs, Logger: logger,
		MCPServerNames: func(string) []string { return []string{"a", "b"} }})
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"present_files", "ask_clarification"}
	for _, tc := range []struct {
		agent string
		want  []string
	}{
		{"", append(append([]string{"ls", "web_search"}, base...), "a_one", "a_two", "b_three", "list_mcp_resources")},
		{"only-a", append(base, "a_one", "a_two")},
		{"none", base},
		{"a-two", append(base, "a_two", "b_three")},
		{"deerflow", append(base, "b_three")},
		{"gone", append(base, "a_one", "a_two")},
		{"every-tool", append(base, "a_one", "a_two", "b_three", "list_mcp_resources")},
	} {
		t.Run("agent "+tc.agent, func(t *testing.T) {
			lead, err := f.Build(t.Context(), agent.Request{AgentName: tc.agent, UserID: "u1"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range lead.Tools.Entries {
				if e.Tool.Name != builtin.UpdateAgentName {
					got = append(got, e.Tool.Name)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
	if !strings.Contains(logs.String(), "custom agent 'gone': config.yaml: mcp_plugins names no configured MCP server: removed") {
		t.Errorf("no warning for the unknown server; logs:\n%s", logs.String())
	}
}

func TestResolveMCPPlugins(t *testing.T) {
	servers, unknown := agent.ResolveMCPPlugins([]string{"github", customagent.InstallationID("notes"), "nope"}, []string{"github", "notes"})
	if !cmp.Equal(servers, []string{"github", "notes"}) || !cmp.Equal(unknown, []string{"nope"}) {
		t.Errorf("servers %v, unknown %v", servers, unknown)
	}
	// DeerFlow's fallback id of a server without capability.id, as
	// Python's uuid.uuid5(uuid.NAMESPACE_URL, "deerflow:mcp:github") gives it.
	if got := customagent.InstallationID("github"); got != "7b0b637d-a47f-5a35-8d31-9ed426e7c259" {
		t.Errorf("DeerFlowInstallationID = %q", got)
	}
}
