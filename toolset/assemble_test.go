package toolset_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

func fakeTool(name string) *tool.Tool {
	return &tool.Tool{Name: name, Description: "fake " + name, InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) { return tool.Text(name), nil }}
}

// fakeRegistry maps "fake:<name>" to a tool named <name>, and the
// DeerFlow bash use string to a tool named bash.
func fakeRegistry(builds *atomic.Int64) *toolset.Registry {
	r := toolset.NewRegistry()
	f := func(_ context.Context, _ *toolset.Env, e config.ToolEntry) (*tool.Tool, error) {
		if builds != nil {
			builds.Add(1)
		}
		name, _ := strings.CutPrefix(e.Use, "fake:")
		if e.Use == "deerflow.sandbox.tools:bash_tool" {
			name = "bash"
		}
		return fakeTool(name), nil
	}
	for _, n := range []string{"ls", "read_file", "web_search", "present_files", "x", "y"} {
		r.RegisterTool(f, "fake:"+n)
	}
	r.RegisterTool(f, "deerflow.sandbox.tools:bash_tool")
	return r
}

type fakeMCP struct {
	tools []*tool.Tool
	err   error
	calls atomic.Int64
}

func (f *fakeMCP) Tools(context.Context) ([]*tool.Tool, error) {
	f.calls.Add(1)
	return f.tools, f.err
}

func mustConfig(t testing.TB, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("config.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("parse config: %v", err)
	}
	return cfg
}

const baseConfig = `
models:
  - {name: plain, use: langchain_openai:ChatOpenAI, model: m1}
  - {name: eyes, use: langchain_openai:ChatOpenAI, model: m2, supports_vision: true}
sandbox:
  use: deerflow.sandbox.local:LocalSandboxProvider
`

var allBuiltins = toolset.Builtins{PresentFiles: fakeTool("present_files"), AskClarification: fakeTool("ask_clarification"),
	SkillManage: fakeTool("skill_manage"), Task: fakeTool("task"), ViewImage: fakeTool("view_image")}

// withUploadTool is b with list_uploaded_files, which the lead's
// assembler has and the subagents' lacks.
func withUploadTool(b toolset.Builtins) *toolset.Builtins {
	b.ListUploadedFiles = fakeTool("list_uploaded_files")
	return &b
}

// withReviewTool is b with review_skill_package.
func withReviewTool(b toolset.Builtins) *toolset.Builtins {
	b.ReviewSkillPackage = fakeTool("review_skill_package")
	return &b
}

// withDescribeSkill is b with describe_skill.
func withDescribeSkill(b toolset.Builtins) *toolset.Builtins {
	b.DescribeSkill = fakeTool("describe_skill")
	return &b
}

type assembleCase struct {
	name    string
	config  string
	opts    toolset.Options
	mcp     *fakeMCP
	acp     bool
	want    []string
	wantLog string
	// builtins replaces allBuiltins when set.
	builtins *toolset.Builtins
}

func runAssemble(t *testing.T, tt assembleCase) {
	t.Helper()
	var logs bytes.Buffer
	a := &toolset.Assembler{
		Registry: fakeRegistry(nil),
		Env:      &toolset.Env{Config: mustConfig(t, tt.config)},
		Builtins: allBuiltins,
		Logger:   slog.New(slog.NewTextHandler(&logs, nil)),
	}
	if tt.builtins != nil {
		a.Builtins = *tt.builtins
	}
	if tt.mcp != nil {
		a.MCP = tt.mcp
	}
	if tt.acp {
		a.ACP = func(context.Context, *config.Config) (*tool.Tool, error) { return fakeTool("invoke_acp_agent"), nil }
	}
	ts, err := a.Assemble(t.Context(), tt.opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tt.want, ts.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if tt.wantLog != "" && !strings.Contains(logs.String(), tt.wantLog) {
		t.Errorf("log %q does not contain %q", logs.String(), tt.wantLog)
	}
}

func TestConfigToolWinsOverBuiltinWithSameName(t *testing.T) {
	runAssemble(t, assembleCase{
		config:  baseConfig + "tools:\n  - {name: present_files, group: files, use: fake:present_files}\n",
		want:    []string{"present_files", "ask_clarification"},
		wantLog: `duplicate tool name \"present_files\": keeping the config tool, dropping the builtin tool`,
	})
}

func TestConfigNameDiffersFromToolName(t *testing.T) {
	runAssemble(t, assembleCase{
		config:  baseConfig + "tools:\n  - {name: list_files, group: files, use: fake:ls}\n",
		want:    []string{"ls", "present_files", "ask_clarification"},
		wantLog: "config_name=list_files tool_name=ls",
	})
}

func TestHostBashGate(t *testing.T) {
	tools := "tools:\n  - {name: bash, group: bash, use: deerflow.sandbox.tools:bash_tool}\n  - {name: shell, group: exec, use: deerflow.sandbox.tools:bash_tool}\n  - {name: y, group: bash, use: fake:y}\n  - {name: ls, group: files, use: fake:ls}\n"
	for _, tt := range []assembleCase{
		{name: "local without allow_host_bash drops bash, renamed bash, bash group", config: baseConfig + tools,
			want: []string{"ls", "present_files", "ask_clarification"}},
		{name: "local with allow_host_bash keeps them", config: strings.Replace(baseConfig, "LocalSandboxProvider", "LocalSandboxProvider\n  allow_host_bash: true", 1) + tools,
			want:    []string{"bash", "y", "ls", "present_files", "ask_clarification"},
			wantLog: "duplicate tool name \\\"bash\\\""},
		{name: "container provider keeps bash", config: strings.Replace(baseConfig, "deerflow.sandbox.local:LocalSandboxProvider", "deerflow.community.aio_sandbox:AioSandboxProvider", 1) + tools,
			want: []string{"bash", "y", "ls", "present_files", "ask_clarification"}},
		{name: "missing sandbox section: not allowed", config: "models:\n  - {name: plain, use: x, model: m}\n" + tools,
			want: []string{"ls", "present_files", "ask_clarification"}},
	} {
		t.Run(tt.name, func(t *testing.T) { runAssemble(t, tt) })
	}
}

func TestViewImageFollowsVision(t *testing.T) {
	for _, tt := range []assembleCase{
		{name: "default first model without vision", config: baseConfig, want: []string{"present_files", "ask_clarification"}},
		{name: "chosen vision model", config: baseConfig, opts: toolset.Options{ModelName: "eyes"}, want: []string{"present_files", "ask_clarification", "view_image"}},
		{name: "unknown model falls back to first", config: baseConfig, opts: toolset.Options{ModelName: "nope"}, want: []string{"present_files", "ask_clarification"}},
	} {
		t.Run(tt.name, func(t *testing.T) { runAssemble(t, tt) })
	}
}

func TestConditionalBuiltins(t *testing.T) {
	for _, tt := range []assembleCase{
		{name: "skill_manage only with skill_evolution", config: baseConfig + "skill_evolution: {enabled: true}\n", want: []string{"present_files", "ask_clarification", "skill_manage"}},
		{name: "task only with subagents", config: baseConfig, opts: toolset.Options{SubagentEnabled: true}, want: []string{"present_files", "ask_clarification", "task"}},
		{name: "neither", config: baseConfig, want: []string{"present_files", "ask_clarification"}},
		{name: "describe_skill only with skills.deferred_discovery", config: baseConfig + "skills: {deferred_discovery: true}\nskill_evolution: {enabled: true}\n",
			builtins: withDescribeSkill(allBuiltins), want: []string{"present_files", "ask_clarification", "skill_manage", "describe_skill"}},
		{name: "describe_skill not without deferred_discovery", config: baseConfig, builtins: withDescribeSkill(allBuiltins),
			want: []string{"present_files", "ask_clarification"}},
		{name: "list_uploaded_files always, before the conditional ones", config: baseConfig + "skill_evolution: {enabled: true}\n",
			opts: toolset.Options{SubagentEnabled: true, ModelName: "eyes"}, builtins: withUploadTool(allBuiltins),
			want: []string{"present_files", "ask_clarification", "list_uploaded_files", "skill_manage", "task", "view_image"}},
		{name: "review_skill_package always, after ask_clarification as in DeerFlow's BUILTIN_TOOLS", config: baseConfig,
			opts: toolset.Options{SubagentEnabled: true}, builtins: withReviewTool(*withUploadTool(allBuiltins)),
			want: []string{"present_files", "ask_clarification", "review_skill_package", "list_uploaded_files", "task"}},
	} {
		t.Run(tt.name, func(t *testing.T) { runAssemble(t, tt) })
	}
}

func TestGroupFilter(t *testing.T) {
	tools := baseConfig + "tools:\n  - {name: ls, group: files, use: fake:ls}\n  - {name: web_search, group: web, use: fake:web_search}\n"
	for _, tt := range []assembleCase{
		{name: "nil keeps all", config: tools, want: []string{"ls", "web_search", "present_files", "ask_clarification"}},
		{name: "empty keeps none", config: tools, opts: toolset.Options{Groups: []string{}}, want: []string{"present_files", "ask_clarification"}},
		{name: "one group", config: tools, opts: toolset.Options{Groups: []string{"web"}}, want: []string{"web_search", "present_files", "ask_clarification"}},
	} {
		t.Run(tt.name, func(t *testing.T) { runAssemble(t, tt) })
	}
}

func TestMCPFailureAndACP(t *testing.T) {
	acpConfig := baseConfig + "acp_agents:\n  coder: {command: coder-acp, description: codes}\n"
	for _, tt := range []assembleCase{
		{name: "MCP source failing keeps the rest", config: baseConfig, opts: toolset.Options{IncludeMCP: true},
			mcp: &fakeMCP{err: errors.New("all servers down")}, want: []string{"present_files", "ask_clarification"},
			wantLog: "MCP tools unavailable"},
		{name: "MCP tools after builtins, duplicates dropped", config: baseConfig, opts: toolset.Options{IncludeMCP: true},
			mcp: &fakeMCP{tools: []*tool.Tool{fakeTool("srv_a"), fakeTool("ask_clarification")}}, want: []string{"present_files", "ask_clarification", "srv_a"},
			wantLog: "keeping the builtin tool, dropping the mcp tool"},
		{name: "IncludeMCP false", config: baseConfig, mcp: &fakeMCP{tools: []*tool.Tool{fakeTool("srv_a")}}, want: []string{"present_files", "ask_clarification"}},
		{name: "ACP tool iff agents configured", config: acpConfig, acp: true, want: []string{"present_files", "ask_clarification", "invoke_acp_agent"}},
		{name: "no ACP agents, no ACP tool", config: baseConfig, acp: true, want: []string{"present_files", "ask_clarification"}},
	} {
		t.Run(tt.name, func(t *testing.T) { runAssemble(t, tt) })
	}
}

func TestUnknownUseNamesLineAndNearest(t *testing.T) {
	cfg := mustConfig(t, baseConfig+"tools:\n  - {name: ls, group: files, use: fake:lss}\n")
	a := &toolset.Assembler{Registry: fakeRegistry(nil), Env: &toolset.Env{Config: cfg}}
	_, err := a.Assemble(t.Context(), toolset.Options{})
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *config.Error", err)
	}
	want := `line 8: tools[0].use: unknown use "fake:lss" (nearest registered: fake:ls, fake:x, fake:y)`
	if err.Error() != want {
		t.Errorf("err =\n%s\nwant\n%s", err, want)
	}
}

// Config tools are built once per loaded config, and an unchanged MCP
// list reuses the previous assembly.
func TestAssembleCachesFactoriesAndResult(t *testing.T) {
	var builds atomic.Int64
	cfg := mustConfig(t, baseConfig+"tools:\n  - {name: ls, group: files, use: fake:ls}\n  - {name: x, group: files, use: fake:x}\n")
	mcp := &fakeMCP{tools: []*tool.Tool{fakeTool("srv_a")}}
	a := &toolset.Assembler{Registry: fakeRegistry(&builds), Env: &toolset.Env{Config: cfg}, MCP: mcp}
	for range 5 {
		ts, err := a.Assemble(t.Context(), toolset.Options{IncludeMCP: true})
		if err != nil {
			t.Fatal(err)
		}
		ts.Entries[0].Tool = nil // callers own their copy
	}
	if builds.Load() != 2 {
		t.Errorf("factories ran %d times, want 2 (once per config tool)", builds.Load())
	}
	mcp.tools = append([]*tool.Tool{fakeTool("srv_b")}, mcp.tools...)
	ts, _ := a.Assemble(t.Context(), toolset.Options{IncludeMCP: true})
	if diff := cmp.Diff([]string{"ls", "x", "srv_b", "srv_a"}, ts.Names()); diff != "" {
		t.Errorf("changed MCP list not picked up (-want +got):\n%s", diff)
	}
}

func ExampleRegistry() {
	r := toolset.NewRegistry()
	r.RegisterTool(func(ctx context.Context, env *toolset.Env, e config.ToolEntry) (*tool.Tool, error) {
		return tool.New("shout", "Upper-cases text.", func(ctx context.Context, c *tool.Call, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return strings.ToUpper(in.Text), nil
		}), nil
	}, "mycorp.tools:shout", "mycorp:shout")
	fmt.Println(r.ToolUses())
	// Output: [mycorp.tools:shout mycorp:shout]
}

// DeerFlow wraps async-only tools so they can be
// called synchronously from inside a running event loop. In Go every tool
// of every source is a blocking call that honours its context, so a tool
// can be called from inside another call (as the loop and subagents do),
// concurrently, with no wrapper.
func TestEveryToolIsABlockingCallableHandler(t *testing.T) {
	cfg := mustConfig(t, baseConfig+"acp_agents:\n  a: {command: x, description: d}\ntools:\n  - {name: x, group: g, use: fake:x}\n")
	a := &toolset.Assembler{Registry: fakeRegistry(nil), Env: &toolset.Env{Config: cfg}, Builtins: allBuiltins,
		MCP: &fakeMCP{tools: []*tool.Tool{fakeTool("srv_a")}},
		ACP: func(context.Context, *config.Config) (*tool.Tool, error) { return fakeTool("invoke_acp_agent"), nil }}
	ts, err := a.Assemble(t.Context(), toolset.Options{IncludeMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	outer := func(ctx context.Context, c *tool.Call, _ json.RawMessage) (*tool.Result, error) {
		var texts []string
		results := make(chan string, len(ts.Entries))
		for _, e := range ts.Entries {
			go func() {
				r, err := e.Tool.Handler(ctx, c, json.RawMessage(`{}`))
				if err != nil {
					results <- "error: " + err.Error()
					return
				}
				results <- r.TextContent()
			}()
		}
		for range ts.Entries {
			texts = append(texts, <-results)
		}
		return tool.Text(strings.Join(texts, ",")), nil
	}
	res, err := outer(t.Context(), &tool.Call{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"x", "present_files", "srv_a", "invoke_acp_agent"} {
		if !strings.Contains(res.TextContent(), name) {
			t.Errorf("nested call results %q lack %s", res.TextContent(), name)
		}
	}
}

// TestAssemble_labelledMCPToolsAreNotCopied: an MCP tool that already
// carries its source label (as mcptools labels them) is bound as the
// source's own value; one without it is bound as a labelled copy and the
// source's value is left as it was.
func TestAssemble_labelledMCPToolsAreNotCopied(t *testing.T) {
	labelled := fakeTool("srv_labelled")
	labelled.Meta = map[string]string{"mcp_server": "srv", tool.MetaSource: string(toolset.SourceMCP)}
	bare := fakeTool("srv_bare")
	bare.Meta = map[string]string{"mcp_server": "srv"}
	a := &toolset.Assembler{Registry: fakeRegistry(nil), Env: &toolset.Env{Config: mustConfig(t, baseConfig)},
		MCP: &fakeMCP{tools: []*tool.Tool{labelled, bare}}}
	ts, err := a.Assemble(t.Context(), toolset.Options{IncludeMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*tool.Tool{}
	for _, e := range ts.Entries {
		got[e.Tool.Name] = e.Tool
	}
	if got["srv_labelled"] != labelled {
		t.Errorf("the labelled MCP tool was copied")
	}
	if got["srv_bare"] == bare || got["srv_bare"].Meta[tool.MetaSource] != string(toolset.SourceMCP) {
		t.Errorf("the unlabelled MCP tool: got %p with source %q, want a labelled copy", got["srv_bare"], got["srv_bare"].Meta[tool.MetaSource])
	}
	if _, ok := bare.Meta[tool.MetaSource]; ok {
		t.Errorf("the source's own tool was changed")
	}
}

// userMCP is an MCP source with per-user tools.
type userMCP struct {
	shared []*tool.Tool
	users  map[string][]*tool.Tool
}

func (u *userMCP) Tools(context.Context) ([]*tool.Tool, error) { return u.shared, nil }

func (u *userMCP) ToolsFor(_ context.Context, user string) ([]*tool.Tool, error) {
	if t, ok := u.users[user]; ok {
		return t, nil
	}
	return u.shared, nil
}

// A run's user gets the MCP tools of the user's view, and the cached
// assembly of one user is never handed to another.
func TestAssembleUserMCPTools(t *testing.T) {
	cfg := mustConfig(t, baseConfig)
	mcp := &userMCP{shared: []*tool.Tool{fakeTool("shared_a")},
		users: map[string][]*tool.Tool{"alice": {fakeTool("shared_a"), fakeTool("alice_notes")}}}
	a := &toolset.Assembler{Registry: fakeRegistry(nil), Env: &toolset.Env{Config: cfg}, MCP: mcp}
	for _, tt := range []struct {
		user string
		want []string
	}{
		{"alice", []string{"shared_a", "alice_notes"}},
		{"bob", []string{"shared_a"}},
		{"alice", []string{"shared_a", "alice_notes"}},
		{"", []string{"shared_a"}},
	} {
		ts, err := a.Assemble(t.Context(), toolset.Options{IncludeMCP: true, User: tt.user})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, ts.Names()); diff != "" {
			t.Errorf("user %q (-want +got):\n%s", tt.user, diff)
		}
	}
}
