package builtin

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
)

// update_agent changes an agent's MCP servers, checked against the
// servers the user's runs see (alice has her own server "notes").
func TestUpdateAgentMCPServers(t *testing.T) {
	e := newAgentEnv(t)
	e.update = NewUpdateAgent(UpdateAgentOptions{Store: e.store, Config: &config.Config{},
		MCPServerNames: func(user string) []string {
			if user == "alice" {
				return []string{"github", "notes"}
			}
			return []string{"github"}
		}})
	dir := e.seed(t, "alice", testAgent, map[string]any{"name": testAgent, "description": "d"}, "s")
	e.seed(t, "bob", testAgent, map[string]any{"name": testAgent, "description": "d"}, "s")
	steps := []struct {
		name, user string
		args       map[string]any
		wantText   string
		wantCfg    map[string]any // the MCP keys of alice's config.yaml afterwards
	}{
		{"bind two servers", "alice", map[string]any{"mcp_plugins": []string{"github", "notes"}},
			"Changed: mcp_plugins.", map[string]any{"mcp_plugins": []any{"github", "notes"}}},
		{"narrow one to a tool", "alice", map[string]any{"mcp_tools": map[string][]string{"github": {"search_code"}}},
			"Changed: mcp_tools.", map[string]any{"mcp_plugins": []any{"github", "notes"}, "mcp_tools": map[string]any{"github": []any{"search_code"}}}},
		{"unknown server refused", "alice", map[string]any{"mcp_plugins": []string{"github", "jira"}},
			"Error: Unknown MCP server(s) in mcp_plugins: jira. Configured servers: github, notes.", nil},
		{"another user's server is unknown", "bob", map[string]any{"mcp_plugins": []string{"notes"}},
			"Error: Unknown MCP server(s) in mcp_plugins: notes. Configured servers: github.", nil},
		{"tools of an unbound server refused", "alice", map[string]any{"mcp_plugins": []string{"notes"}},
			"Error: mcp_tools: server 'github' is not in mcp_plugins", nil},
		{"DeerFlow installation id", "alice", map[string]any{"mcp_plugins": []string{customagent.InstallationID("github")}, "mcp_tools": map[string]any{}},
			"Changed: mcp_plugins, mcp_tools.", map[string]any{"mcp_plugins": []any{customagent.InstallationID("github")}}},
		{"none", "alice", map[string]any{"mcp_plugins": []string{}},
			"Changed: mcp_plugins.", map[string]any{"mcp_plugins": []any{}}},
	}
	for _, st := range steps {
		res := callTool(t, e.update, agentCall(st.user, testAgent), st.args)
		if !strings.Contains(res.TextContent(), st.wantText) {
			t.Errorf("%s: result %q, want it to contain %q", st.name, res.TextContent(), st.wantText)
		}
		if st.wantCfg == nil {
			continue
		}
		cfg := readConfig(t, dir)
		got := map[string]any{}
		for _, k := range []string{"mcp_plugins", "mcp_tools"} {
			if v, ok := cfg[k]; ok {
				got[k] = v
			}
		}
		if diff := cmp.Diff(st.wantCfg, got); diff != "" {
			t.Errorf("%s: config (-want +got):\n%s", st.name, diff)
		}
	}
}
