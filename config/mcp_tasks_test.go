package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMCPTasksSection(t *testing.T) {
	c := mustParse(t, "mcp_tasks:\n  enabled: true\n  lease_seconds: 30\n", nil)
	want := defaultMCPTasks()
	want.Enabled, want.LeaseSeconds = true, 30
	if diff := cmp.Diff(want, c.MCPTasks); diff != "" {
		t.Errorf("MCPTasks (-want +got):\n%s", diff)
	}
	if len(c.Ignored) != 0 {
		t.Errorf("mcp_tasks reported as ignored: %v", c.Ignored)
	}
	for _, tc := range []struct{ name, src, want string }{
		{"poll interval too short", "mcp_tasks:\n  poll_interval_seconds: 0\n", "config.yaml:2: mcp_tasks.poll_interval_seconds: must be between 1 and 300, got 0"},
		{"lease too long", "mcp_tasks:\n  lease_seconds: 7200\n", "mcp_tasks.lease_seconds: must be between 5 and 3600, got 7200"},
		{"result bound too small", "mcp_tasks:\n  max_result_bytes: 10\n", "mcp_tasks.max_result_bytes: must be between 1024 and 10485760"},
		{"unknown key", "mcp_tasks:\n  poll_every: 3\n", "mcp_tasks.poll_every"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tc.src), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestTaskToolsets(t *testing.T) {
	doc := func(toolsets string) string {
		return `{"mcpServers": {"r": {"type": "http", "url": "http://127.0.0.1:1/mcp", "task_toolsets": [` + toolsets + `]}}}`
	}
	ok := `{"name": "report", "submit_tool": "submit", "status_tool": "status", "cancel_tool": "cancel"}`
	ext, err := ParseExtensions("ext.json", []byte(doc(ok)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := ext.TaskToolsetCount(); n != 1 || ext.MCPServers["r"].Err != nil {
		t.Fatalf("TaskToolsetCount = %d, server error %v", n, ext.MCPServers["r"].Err)
	}
	for _, tc := range []struct{ name, toolsets, want string }{
		{"blank name", `{"name": " ", "submit_tool": "a", "status_tool": "b", "cancel_tool": "c"}`, "task_toolsets[0].name: must not be empty"},
		{"missing tool", `{"name": "n", "submit_tool": "a", "status_tool": "b"}`, "task_toolsets[0].cancel_tool: must name a tool of the server"},
		{"one tool in two roles", `{"name": "n", "submit_tool": "a", "status_tool": "a", "cancel_tool": "c"}`, `task_toolsets[0].status_tool: tool "a" is already the submit_tool of toolset "n"`},
		{"duplicate name", ok + `, {"name": "Report", "submit_tool": "x", "status_tool": "y", "cancel_tool": "z"}`, `task_toolsets[1].name: "Report" names another toolset`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ext, err := ParseExtensions("ext.json", []byte(doc(tc.toolsets)), nil)
			if err != nil {
				t.Fatal(err)
			}
			s := ext.MCPServers["r"]
			if s.Err == nil || !strings.Contains(s.Err.Error(), tc.want) {
				t.Errorf("server error = %v, want it to contain %q", s.Err, tc.want)
			}
			if ext.TaskToolsetCount() != 0 {
				t.Error("a broken server's toolsets were counted")
			}
		})
	}
}

// A user's own server may not declare task toolsets: it is unusable, and
// says why.
func TestUserServerTaskToolsetsRefused(t *testing.T) {
	doc := `{"mcpServers": {"mine": {"type": "http", "url": "http://127.0.0.1:1/mcp", "task_toolsets": [
		{"name": "n", "submit_tool": "a", "status_tool": "b", "cancel_tool": "c"}]}, "plain": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}`
	u, err := ParseUserMCP("mcp_config.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if e := u.MCPServers["mine"].Err; e == nil || !strings.Contains(e.Error(), "mcpServers.mine.task_toolsets: is not supported for a user's own server") {
		t.Errorf("mine: %v", e)
	}
	if e := u.MCPServers["plain"].Err; e != nil {
		t.Errorf("plain: %v", e)
	}
}
