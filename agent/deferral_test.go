package agent_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// sizedTool is a tool whose definition takes about tokens tokens.
func sizedTool(name string, tokens int) *tool.Tool {
	t := textTool(name, "ok")
	t.Description = strings.Repeat("x", max(tokens-agent.DefinitionTokens(t), 0)*4)
	return t
}

func TestDeferredNames(t *testing.T) {
	mcp := func(server, name string, tokens int) toolset.Entry {
		return toolset.Entry{Tool: sizedTool(server+"_"+name, tokens), Source: toolset.SourceMCP, Group: server}
	}
	cfgTool := toolset.Entry{Tool: sizedTool("web_search", 100), Source: toolset.SourceConfig, Group: "web"}
	builtinTool := toolset.Entry{Tool: sizedTool("present_files", 100), Source: toolset.SourceBuiltin, Group: "builtin"}
	search := toolset.Entry{Tool: sizedTool(deferred.ToolSearchName, 100), Source: toolset.SourceBuiltin, Group: "builtin"}
	small := []toolset.Entry{cfgTool, builtinTool, mcp("gh", "a", 1000), mcp("gh", "b", 1000), mcp("fs", "c", 1000)}
	section := func(mode string) config.ToolSearch {
		return config.ToolSearch{Enabled: true, Defer: mode, AutoContextPercent: 10}
	}
	tests := []struct {
		name    string
		entries []toolset.Entry
		opts    agent.DeferOptions
		want    []string
	}{
		{name: "always defers every MCP tool and nothing else", entries: small, opts: agent.DeferOptions{Config: section("always")},
			want: []string{"fs_c", "gh_a", "gh_b"}},
		{name: "auto under the share binds everything", entries: small,
			opts: agent.DeferOptions{Config: section("auto"), ContextWindow: 100_000}},
		{name: "auto over the share defers the MCP tools", entries: small,
			opts: agent.DeferOptions{Config: section("auto"), ContextWindow: 20_000}, want: []string{"fs_c", "gh_a", "gh_b"}},
		{name: "auto with no context window assumes the default", entries: []toolset.Entry{mcp("gh", "a", agent.DefaultContextWindow/10+100)},
			opts: agent.DeferOptions{Config: section("auto")}, want: []string{"gh_a"}},
		{name: "auto count rule", entries: small,
			opts: agent.DeferOptions{Config: config.ToolSearch{Enabled: true, Defer: "auto", AutoContextPercent: 100, AutoToolCount: 2}}, want: []string{"fs_c", "gh_a", "gh_b"}},
		{name: "auto count rule at the limit binds", entries: small,
			opts: agent.DeferOptions{Config: config.ToolSearch{Enabled: true, Defer: "auto", AutoContextPercent: 100, AutoToolCount: 3}}},
		{name: "server never wins over the section", entries: small,
			opts: agent.DeferOptions{Config: section("always"), Servers: map[string]config.MCPServer{"gh": {Defer: "never"}}}, want: []string{"fs_c"}},
		{name: "server auto under an always section is judged alone", entries: small,
			opts: agent.DeferOptions{Config: section("always"), ContextWindow: 100_000, Servers: map[string]config.MCPServer{"gh": {Defer: "auto"}}},
			want: []string{"fs_c"}},
		{name: "server always under an auto section", entries: small,
			opts: agent.DeferOptions{Config: section("auto"), ContextWindow: 100_000, Servers: map[string]config.MCPServer{"fs": {Defer: "always"}}},
			want: []string{"fs_c"}},
		{name: "per tool wins over the server", entries: small,
			opts: agent.DeferOptions{Config: config.ToolSearch{Enabled: true, Defer: "always", AutoContextPercent: 10, Tools: map[string]string{"gh_a": "never"}},
				Servers: map[string]config.MCPServer{"gh": {Defer: "always"}}}, want: []string{"fs_c", "gh_b"}},
		{name: "config and built-in tools deferred by name", entries: small,
			opts: agent.DeferOptions{Config: config.ToolSearch{Enabled: true, Defer: "auto", AutoContextPercent: 100,
				Tools: map[string]string{"web_search": "always", "present_files": "always"}}},
			want: []string{"present_files", "web_search"}},
		{name: "tool_search itself is never deferred", entries: append(slices.Clone(small), search),
			opts: agent.DeferOptions{Config: config.ToolSearch{Enabled: true, Defer: "always", AutoContextPercent: 10, Tools: map[string]string{deferred.ToolSearchName: "always"}}},
			want: []string{"fs_c", "gh_a", "gh_b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Sorted(func(yield func(string) bool) {
				for n := range agent.DeferredNames(tt.entries, tt.opts) {
					if !yield(n) {
						return
					}
				}
			})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("deferred (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFactory_autoDeferral builds the lead agent with tool_search.defer:
// auto: a catalogue within the count rule binds its tools with their
// schemas and no tool_search; one more tool defers them all; a built-in
// named in tool_search.tools is deferred with them.
func TestFactory_autoDeferral(t *testing.T) {
	build := func(t *testing.T, section string, mcp staticMCP) *agent.Lead {
		t.Helper()
		cfg, err := config.Parse("config.yaml", fmt.Appendf(nil, recipeConfig, section), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		asm := &toolset.Assembler{Registry: testRegistry(), Env: &toolset.Env{Config: cfg},
			Builtins: toolset.Builtins{PresentFiles: textTool("present_files", "ok"), AskClarification: builtin.AskClarification(),
				Task: textTool("task", "done")},
			MCP: mcp}
		f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm})
		if err != nil {
			t.Fatal(err)
		}
		lead, err := f.Build(t.Context(), agent.Request{ThreadID: "t1", UserID: "u1", RunID: "r1"})
		if err != nil {
			t.Fatal(err)
		}
		return lead
	}
	two := staticMCP{mcpTool("github", "create_issue", "Create an issue."), mcpTool("github", "list_pulls", "List pull requests.")}
	three := append(slices.Clone(two), mcpTool("github", "merge_pull", "Merge a pull request."))
	const auto = "tool_search:\n  enabled: true\n  defer: auto\n  auto_tool_count: 2\n"

	lead := build(t, auto, two)
	if _, ok := lead.Tools.Lookup(deferred.ToolSearchName); ok {
		t.Error("two MCP tools within auto_tool_count 2: tool_search is bound")
	}
	if e, ok := lead.Tools.Lookup("github_create_issue"); !ok || e.Deferred {
		t.Errorf("two MCP tools within auto_tool_count 2: github_create_issue bound %v, deferred %v", ok, e.Deferred)
	}

	lead = build(t, auto+"  tools: {present_files: always}\n", three)
	if _, ok := lead.Tools.Lookup(deferred.ToolSearchName); !ok {
		t.Fatal("three MCP tools over auto_tool_count 2: no tool_search bound")
	}
	for _, name := range []string{"github_create_issue", "github_list_pulls", "github_merge_pull", "present_files"} {
		if e, _ := lead.Tools.Lookup(name); !e.Deferred {
			t.Errorf("%s is not deferred", name)
		}
	}
	if e, _ := lead.Tools.Lookup("ls"); e.Deferred {
		t.Error("ls is deferred, and nothing named it")
	}
}
