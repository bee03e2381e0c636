package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskToolsetServer is an MCP server (Go SDK, 127.0.0.1) with one
// submit/status/cancel toolset and an ordinary tool; it returns the
// extensions file declaring the toolset.
func taskToolsetServer(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "reports", Version: "1"}, nil)
	type in struct {
		TaskID string `json:"task_id,omitempty"`
	}
	answer := func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, map[string]any, error) {
		return nil, map[string]any{"task_id": "r1", "status": "running"}, nil
	}
	for _, name := range []string{"submit_report", "report_status", "cancel_report", "ping"} {
		mcp.AddTool(srv, &mcp.Tool{Name: name, Description: name}, answer)
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return `{"mcpServers": {"reports": {"type": "http", "url": "` + hs.URL + `", "task_toolsets": [
		{"name": "Quarterly report", "submit_tool": "submit_report", "status_tool": "report_status", "cancel_tool": "cancel_report"}]}}}`
}

// With mcp_tasks enabled, tools list binds the background-task tools and
// the toolset's submit tool only; without it, run refuses to start.
func TestMCPTasksWiring(t *testing.T) {
	ext := taskToolsetServer(t)
	for _, tc := range []struct {
		name, config string
		want         []string
	}{
		{"enabled", cliConfig + "mcp_tasks:\n  enabled: true\n", []string{"list_background_tasks", "cancel_background_task", "reports_ping", "reports_submit_report"}},
		{"disabled", cliConfig, []string{"reports_ping"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeFile(t, dir, "config.yaml", tc.config)
			writeFile(t, dir, "extensions_config.json", ext)
			code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list", "--json", "--groups", "")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var list []toolJSON
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var names []string
			for _, e := range list {
				if slices.Contains([]string{"present_files", "ask_clarification", "list_uploaded_files", "review_skill_package"}, e.Name) {
					continue
				}
				names = append(names, e.Name)
			}
			if strings.Join(names, " ") != strings.Join(tc.want, " ") {
				t.Errorf("bound tools = %v, want %v", names, tc.want)
			}
		})
	}
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", cliConfig)
	writeFile(t, dir, "extensions_config.json", ext)
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "run", "hi")
	if code != 2 || !strings.Contains(errOut, "mcpServers.reports.task_toolsets") || !strings.Contains(errOut, "mcp_tasks.enabled: true") {
		t.Errorf("run with task_toolsets and mcp_tasks off: exit %d, stderr %q", code, errOut)
	}
}
