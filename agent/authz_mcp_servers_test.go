package agent_test

import (
	"slices"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/toolset"
)

// TestFilterEntries_dropsToolsOfDeniedMCPServers: a role's mcp_servers
// policy removes every tool of a denied server before binding; tools of
// allowed servers and of no server stay.
func TestFilterEntries_dropsToolsOfDeniedMCPServers(t *testing.T) {
	az, err := authz.New(authz.Options{Config: config.Authorization{Enabled: true, FailClosed: true, DefaultRole: "user",
		Provider: &config.AuthorizationProvider{Use: config.RBACAuthorizationUse, Config: map[string]any{"roles": map[string]any{
			"user": map[string]any{"mcp_servers": map[string]any{"deny": []any{"fs"}}},
		}}}}})
	if err != nil {
		t.Fatal(err)
	}
	entries := []toolset.Entry{
		{Tool: textTool("bash", "ok"), Source: toolset.SourceBuiltin},
		{Tool: mcpTool("fs", "write", "Write a file."), Source: toolset.SourceMCP},
		{Tool: mcpTool("docs", "search", "Search the docs."), Source: toolset.SourceMCP},
	}
	var got []string
	for _, e := range agent.FilterEntries(t.Context(), az, map[string]any{"user_role": "user"}, entries) {
		got = append(got, e.Tool.Name)
	}
	if want := []string{"bash", "docs_search"}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
}
