package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/skills"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
	"github.com/antlerhq/antler/vpath"
)

// staticMCP is an MCP source with a fixed tool list.
type staticMCP []*tool.Tool

func (s staticMCP) Tools(context.Context) ([]*tool.Tool, error) { return s, nil }

func mcpTool(server, name, desc string) *tool.Tool {
	t := textTool(server+"_"+name, "ok")
	t.Description = desc
	t.Meta = map[string]string{"mcp_server": server, "mcp_tool": name}
	return t
}

const recipeConfig = `
models:
  - name: first
    use: test:model
    model: m1
    supports_thinking: true
tools:
  - name: ls
    group: file:read
    use: test:ls
  - name: web_search
    group: web
    use: test:web
loop_detection:
  enabled: true
%s
`

// recipeFactory is a factory over recipeConfig with extra YAML appended,
// every embedder hook set, and two MCP tools.
func recipeFactory(t *testing.T, extra string) *agent.Factory {
	t.Helper()
	cfg, err := config.Parse("config.yaml", fmt.Appendf(nil, recipeConfig, extra), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	reg := testRegistry()
	asm := &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: cfg},
		Builtins: toolset.Builtins{
			PresentFiles:      textTool("present_files", "ok"),
			AskClarification:  builtin.AskClarification(),
			Task:              textTool("task", "done"),
			ListUploadedFiles: builtin.NewListUploadedFiles(recipeLayout(t), agent.NeutralizeUntrustedTags),
			ReviewSkillPackage: builtin.NewReviewSkillPackage(builtin.ReviewSkillPackageOptions{Layout: recipeLayout(t),
				Skills: skills.NewStore(skills.Options{Home: t.TempDir()}), Neutralize: agent.NeutralizeUntrustedTags}),
		},
		MCP: staticMCP{
			mcpTool("github", "create_issue", "Create an issue in a repository."),
			mcpTool("github", "list_pulls", "List the pull requests of a repository."),
		}}
	pass := func(next tool.Handler) tool.Handler { return next }
	passModel := func(next tool.ModelHandler) tool.ModelHandler { return next }
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm,
		Agents:      agents{"coder": {Name: "coder", ToolGroups: []string{"file:read"}, Soul: "Write Go.", Skills: []string{"go"}}},
		SetupAgent:  textTool(builtin.SetupAgentName, "created"),
		UpdateAgent: textTool(builtin.UpdateAgentName, "updated"),
		Skills: func(ctx context.Context, user string, allowed []string) (string, error) {
			return fmt.Sprintf("<skill_system>allowed: %q</skill_system>", allowed), nil
		},
		SubagentLimit:    func(int) tool.ModelMiddleware { return passModel },
		ToolMiddlewares:  []tool.Middleware{pass},
		ModelMiddlewares: []tool.ModelMiddleware{passModel, passModel},
		Now:              func() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// renderLead is the reviewable text of a built lead agent: its bound
// tools, its middleware order, its runtime context keys and its prompt.
func renderLead(lead *agent.Lead) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model: %s (thinking %v)\n\n## tools (bound order)\n", lead.ModelName, lead.Thinking)
	for _, e := range lead.Tools.Entries {
		fmt.Fprintf(&b, "%s\t%s\t%s\tdeferred=%v\n", e.Tool.Name, e.Source, e.Group, e.Deferred)
	}
	fmt.Fprintf(&b, "\n## tool middlewares (outermost first)\n%s\n", strings.Join(lead.ToolMiddlewares, "\n"))
	fmt.Fprintf(&b, "\n## model middlewares (outermost first)\n%s\n", strings.Join(lead.ModelMiddlewares, "\n"))
	fmt.Fprintf(&b, "\n## runtime context\n")
	for _, k := range sortedKeys(lead.Context) {
		fmt.Fprintf(&b, "%s=%v\n", k, lead.Context[k])
	}
	fmt.Fprintf(&b, "\n## prompt\n%s\n", lead.Prompt)
	return b.String()
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestLeadRecipe_Golden pins, for a few representative configs, what a
// lead agent binds, the order of its middlewares and the prompt it
// sends, so that a change to any of them shows in review. Run with
// -update to rewrite testdata/golden/*.golden.
func TestLeadRecipe_Golden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra string
		req   agent.Request
	}{
		{"default_agent", "", agent.Request{ThreadID: "t1", UserID: "u1", RunID: "r1"}},
		{"custom_agent", "", agent.Request{ThreadID: "t1", UserID: "u1", RunID: "r1", AgentName: "coder"}},
		{"bootstrap", "", agent.Request{ThreadID: "t1", UserID: "u1", RunID: "r1", AgentName: "new-one", IsBootstrap: true}},
		{"non_interactive_no_mcp", "", agent.Request{ThreadID: "t1", UserID: "u1", RunID: "r1", NonInteractive: true, NoMCP: true}},
		{"subagents_and_deferred_tools", "tool_search:\n  enabled: true\n",
			agent.Request{ThreadID: "t1", UserID: "u1", RunID: "r1", SubagentEnabled: true, MaxTotalSubagents: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lead, err := recipeFactory(t, tc.extra).Build(t.Context(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			got := renderLead(lead)
			path := filepath.Join("testdata", "golden", tc.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./agent -run TestLeadRecipe_Golden -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s changed (-want +got); if intended, rerun with -update:\n%s", path, diff)
			}
		})
	}
}

// TestChainSpec_OneOrder checks the order the shared chain builder gives
// when every optional middleware is present: lead agents and subagents
// take their chains from it, so this is the one definition of the order.
func TestChainSpec_OneOrder(t *testing.T) {
	pass := func(next tool.Handler) tool.Handler { return next }
	passModel := func(next tool.ModelHandler) tool.ModelHandler { return next }
	c := agent.ChainSpec{ToolMiddlewares: []tool.Middleware{pass}, ModelMiddlewares: []tool.ModelMiddleware{passModel},
		SubagentLimit: passModel, LoopDetection: passModel, TokenBudget: passModel, SafetyFinishReason: passModel, Clarification: true}.Build()
	if diff := cmp.Diff([]string{"embedder[0]", "tool_result_sanitization", "clarification"}, c.ToolNames); diff != "" {
		t.Errorf("tool chain (-want +got):\n%s", diff)
	}
	want := []string{"input_sanitization", "dangling_tool_calls", "embedder[0]", "subagent_limit", "loop_detection", "token_budget", "safety_finish_reason"}
	if diff := cmp.Diff(want, c.ModelNames); diff != "" {
		t.Errorf("model chain (-want +got):\n%s", diff)
	}
	if len(c.Tool) != len(c.ToolNames) || len(c.Model) != len(c.ModelNames) {
		t.Errorf("names and middlewares differ in length: %d/%d tool, %d/%d model",
			len(c.Tool), len(c.ToolNames), len(c.Model), len(c.ModelNames))
	}
}

// recipeLayout is a layout over a temporary home, for the built-ins that
// need one.
func recipeLayout(t *testing.T) *vpath.Layout {
	t.Helper()
	l, err := vpath.New(vpath.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
