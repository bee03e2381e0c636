package subagent_test

import (
	"context"
	"slices"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/tool"
)

type mcpTools []*tool.Tool

func (m mcpTools) Tools(context.Context) ([]*tool.Tool, error) { return m, nil }

func serverTool(server, name string) *tool.Tool {
	t := textTool(server+"_"+name, "ok")
	t.Meta = map[string]string{"mcp_server": server, "mcp_tool": name}
	return t
}

// A task of an agent bound to server a (mcp_plugins in the parent's
// runtime context, as after a JSON round trip) never gets server b's
// tools.
func TestTaskKeepsTheAgentsMCPServers(t *testing.T) {
	for _, tc := range []struct {
		name string
		rc   map[string]any
		want []string
	}{
		{"no choice", map[string]any{"model_name": "worker"}, []string{"a_one", "b_two"}},
		{"bound to a", map[string]any{"model_name": "worker", "mcp_plugins": []any{"a"}}, []string{"a_one"}},
		{"none", map[string]any{"model_name": "worker", "mcp_plugins": []string{}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			worker := answers("done")
			h := newHarness(t, baseConfig, map[string]model.ChatModel{"worker": worker}, nil)
			h.asm.MCP = mcpTools{serverTool("a", "one"), serverTool("b", "two")}
			var rec recorder
			if _, err := h.callTask(t.Context(), &rec, tc.rc, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, name := range modeltest.ToolNames(worker.Requests()[0]) {
				if name == "a_one" || name == "b_two" {
					got = append(got, name)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("MCP tools = %v, want %v", got, tc.want)
			}
		})
	}
}
