package acptools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/sandbox"
	"github.com/antlerhq/antler/tool"
)

// What an ACP agent writes into its workspace is readable by the lead
// agent under /mnt/acp-workspace through the sandbox tools, and only
// readable.
func TestACPWorkspaceReadOnlyThroughSandboxTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	call := &tool.Call{ID: "c1", ThreadID: "t1", UserID: "u1"}
	res, err := h.call(t, t.Context(), call, map[string]config.ACPAgent{"a": {Command: testAgentBin(t), Args: []string{"fs"}, TimeoutSeconds: 60}}, "a", "x")
	if err != nil || !strings.Contains(resultText(res), "write-inside: ok") {
		t.Fatalf("agent run: %v %q", err, resultText(res))
	}

	tools := sandbox.NewTools(sandbox.NewLocal(h.layout, sandbox.LocalOptions{}), sandbox.ToolsOptions{})
	run := func(tl *tool.Tool, args map[string]any) *tool.Result {
		t.Helper()
		data, _ := json.Marshal(args)
		r, err := tl.Handler(t.Context(), call, data)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if got := run(tools.ReadFile(), map[string]any{"description": "read agent output", "path": "/mnt/acp-workspace/out/result.txt"}); got.IsError || got.TextContent() != "written by the agent\n" {
		t.Errorf("read_file = %q (error %v)", got.TextContent(), got.IsError)
	}
	if got := run(tools.Ls(), map[string]any{"description": "list", "path": "/mnt/acp-workspace"}); !strings.Contains(got.TextContent(), "/mnt/acp-workspace/report.json") {
		t.Errorf("ls = %q", got.TextContent())
	}
	got := run(tools.WriteFile(), map[string]any{"description": "try", "path": "/mnt/acp-workspace/out/result.txt", "content": "overwritten"})
	if want := "Error: Write access to ACP workspace is not allowed: /mnt/acp-workspace/out/result.txt"; got.TextContent() != want {
		t.Errorf("write_file = %q, want %q", got.TextContent(), want)
	}
}
