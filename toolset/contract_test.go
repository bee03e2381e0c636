package toolset_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/antlerhq/antler/acptools"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/community/browser"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/sandbox"
	"github.com/antlerhq/antler/skills"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/tool/tooltest"
	"github.com/antlerhq/antler/toolset"
	"github.com/antlerhq/antler/vpath"
)

// contractConfig enables every config tool that can be built offline.
// The web tools point at a closed local port: the contract calls that
// reach them (bad arguments, a cancelled context) must fail before any
// request, and none of them is run live.
const contractConfig = `
models:
  - {name: eyes, use: langchain_openai:ChatOpenAI, model: m, supports_vision: true}
sandbox:
  use: deerflow.sandbox.local:LocalSandboxProvider
  allow_host_bash: true
skill_evolution:
  enabled: true
tool_search:
  enabled: true
acp_agents:
  never-started:
    command: /nonexistent/acp-agent
    description: An ACP agent the contract test never starts.
tools:
  - {name: ls, group: file:read, use: deerflow.sandbox.tools:ls_tool}
  - {name: read_file, group: file:read, use: deerflow.sandbox.tools:read_file_tool}
  - {name: glob, group: file:read, use: deerflow.sandbox.tools:glob_tool}
  - {name: grep, group: file:read, use: deerflow.sandbox.tools:grep_tool}
  - {name: write_file, group: file:write, use: deerflow.sandbox.tools:write_file_tool}
  - {name: str_replace, group: file:write, use: deerflow.sandbox.tools:str_replace_tool}
  - {name: bash, group: bash, use: deerflow.sandbox.tools:bash_tool}
  - {name: web_search, group: web, use: deerflow.community.searxng.tools:web_search_tool, base_url: "http://127.0.0.1:1"}
  - {name: web_fetch, group: web, use: deerflow.community.jina_ai.tools:web_fetch_tool, provider: jina, base_url: "http://127.0.0.1:1"}
  - {name: image_search, group: web, use: deerflow.community.brave.tools:image_search_tool, base_url: "http://127.0.0.1:1", api_key: unused}
  - {name: web_capture, group: web, use: deerflow.community.browserless.tools:web_capture_tool, base_url: "http://127.0.0.1:1"}
  - {name: browser_navigate, group: browser, use: deerflow.community.browser_automation.tools:browser_navigate_tool, timeout_ms: 30000}
  - {name: browser_snapshot, group: browser, use: deerflow.community.browser_automation.tools:browser_snapshot_tool}
  - {name: browser_click, group: browser, use: deerflow.community.browser_automation.tools:browser_click_tool}
  - {name: browser_type, group: browser, use: deerflow.community.browser_automation.tools:browser_type_tool}
  - {name: browser_get_text, group: browser, use: deerflow.community.browser_automation.tools:browser_get_text_tool, max_chars: 8000}
  - {name: browser_back, group: browser, use: deerflow.community.browser_automation.tools:browser_back_tool}
  - {name: browser_screenshot, group: browser, use: deerflow.community.browser_automation.tools:browser_screenshot_tool}
  - {name: browser_close, group: browser, use: deerflow.community.browser_automation.tools:browser_close_tool}
  - name: shout
    group: command
    use: antler:command
    command: [/bin/echo, shout]
    description: Prints shout.
`

const (
	contractUser   = "default"
	contractThread = "contract"
)

// onePixelPNG is a 1×1 PNG for view_image.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// fakeDelegator runs no subagent: a live task completes at once, a
// cancelled one reports the cancellation.
type fakeDelegator struct{}

func (fakeDelegator) ResolveTask(subagentType, _ string) (builtin.TaskType, error) {
	return builtin.TaskType{Name: subagentType}, nil
}

func (fakeDelegator) Delegate(ctx context.Context, _ builtin.TaskRequest, _ func(builtin.TaskProgress)) (builtin.TaskResult, error) {
	if err := ctx.Err(); err != nil {
		return builtin.TaskResult{Status: builtin.TaskCancelled, Error: "cancelled"}, err
	}
	return builtin.TaskResult{Status: builtin.TaskCompleted, Result: "done"}, nil
}

// contractTools assembles every tool a run can bind, wired as the CLI
// wires them (internal/cli/wire.go), over a temporary home.
func contractTools(t *testing.T) ([]*tool.Tool, *toolset.Env) {
	t.Helper()
	home := t.TempDir()
	cfg := mustConfig(t, contractConfig)
	layout, err := vpath.FromConfig(home, cfg, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	tp, err := layout.EnsureThreadDirs(contractUser, contractThread)
	if err != nil {
		t.Fatal(err)
	}
	png, _ := base64.StdEncoding.DecodeString(onePixelPNG)
	for path, data := range map[string][]byte{
		filepath.Join(tp.Workspace, "notes.txt"): []byte("alpha\nbeta\n"),
		filepath.Join(tp.Outputs, "report.md"):   []byte("# Report\n"),
		filepath.Join(tp.Uploads, "pixel.png"):   png,
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	sk := skills.NewStore(skills.Options{SkillsPath: filepath.Join(home, "skills"), Home: home})
	agents := customagent.New(layout, customagent.Options{})
	acp, err := acptools.New(acptools.Options{Layout: layout})
	if err != nil {
		t.Fatal(err)
	}
	browsers := browser.NewManager(browser.ManagerOptions{})
	t.Cleanup(func() { _ = browsers.Close() })
	env := &toolset.Env{Config: cfg, Home: home, Sandbox: sandbox.NewLocal(layout, sandbox.LocalOptions{}), Browser: browsers}
	asm := &toolset.Assembler{
		Registry: toolset.DefaultRegistry(),
		Env:      env,
		Builtins: toolset.Builtins{
			PresentFiles:     builtin.NewPresentFiles(layout),
			AskClarification: builtin.AskClarification(),
			ViewImage:        builtin.NewViewImage(layout),
			SkillManage:      builtin.NewSkillManage(builtin.SkillManageOptions{Store: sk}),
			Task:             builtin.NewTask(fakeDelegator{}),
			ReviewSkillPackage: builtin.NewReviewSkillPackage(builtin.ReviewSkillPackageOptions{
				Layout: layout, Skills: sk, Neutralize: func(s string) string { return s }}),
		},
		ACP: acp.Tool,
	}
	ts, err := asm.Assemble(t.Context(), toolset.Options{SubagentEnabled: true})
	if err != nil {
		t.Fatal(err)
	}
	// The lead-agent factory adds these by rule (agent/factory.go).
	catalog := deferred.NewCatalog([]*tool.Tool{fakeTool("github_search_issues"), fakeTool("slack_post_message")})
	if skipped := ts.Add(toolset.SourceBuiltin, "builtin",
		builtin.NewSetupAgent(agents, nil),
		builtin.NewUpdateAgent(builtin.UpdateAgentOptions{Store: agents, Config: cfg}),
		deferred.NewToolSearch(catalog, 0),
		builtin.NewDescribeSkill(builtin.DescribeSkillOptions{Load: sk.Load}), // bound by skills.deferred_discovery
	); len(skipped) > 0 {
		t.Fatalf("tools already present: %v", skipped)
	}
	return ts.Tools(), env
}

// contractSamples are valid calls; Live ones only touch the temporary
// home.
var contractSamples = map[string]tooltest.Sample{
	"ls":           {Args: []byte(`{"description":"list","path":"/mnt/user-data/workspace"}`), Live: true},
	"read_file":    {Args: []byte(`{"description":"read","path":"/mnt/user-data/workspace/notes.txt"}`), Live: true},
	"glob":         {Args: []byte(`{"description":"find","pattern":"*.txt","path":"/mnt/user-data/workspace"}`), Live: true},
	"grep":         {Args: []byte(`{"description":"search","pattern":"beta","path":"/mnt/user-data/workspace"}`), Live: true},
	"write_file":   {Args: []byte(`{"description":"write","path":"/mnt/user-data/workspace/new.txt","content":"x"}`), Live: true},
	"str_replace":  {Args: []byte(`{"description":"edit","path":"/mnt/user-data/workspace/notes.txt","old_str":"alpha","new_str":"gamma"}`)},
	"bash":         {Args: []byte(`{"description":"say hi","command":"echo hi"}`)},
	"web_search":   {Args: []byte(`{"query":"antler"}`)},
	"web_fetch":    {Args: []byte(`{"url":"https://example.com/"}`)},
	"image_search": {Args: []byte(`{"query":"antler"}`)},
	"web_capture":  {Args: []byte(`{"url":"https://example.com/"}`)},
	// No browser starts: the contract config makes no session, and
	// navigate's cancelled call ends in its lookup.
	"browser_navigate":   {Args: []byte(`{"url":"https://example.com/"}`)},
	"browser_snapshot":   {Args: []byte(`{}`)},
	"browser_click":      {Args: []byte(`{"ref":1}`)},
	"browser_type":       {Args: []byte(`{"ref":1,"text":"x"}`)},
	"browser_get_text":   {Args: []byte(`{}`)},
	"browser_back":       {Args: []byte(`{}`)},
	"browser_screenshot": {Args: []byte(`{}`)},
	"browser_close":      {Args: []byte(`{}`), Live: true},
	"shout":              {Args: []byte(`{}`)},
	"present_files":      {Args: []byte(`{"filepaths":["/mnt/user-data/outputs/report.md"]}`), Live: true},
	"describe_skill":     {Args: []byte(`{"name":"chart visualization"}`), Live: true},
	"ask_clarification":  {Args: []byte(`{"question":"Which one?","clarification_type":"missing_info"}`), Live: true},
	"view_image":         {Args: []byte(`{"image_path":"/mnt/user-data/uploads/pixel.png"}`), Live: true},
	"skill_manage":       {Args: []byte(`{"action":"delete","name":"no-such-skill"}`)},
	"task": {Args: []byte(`{"description":"look","prompt":"Look around.","subagent_type":"general-purpose"}`),
		Live: true},
	"invoke_acp_agent": {Args: []byte(`{"agent":"never-started","prompt":"hi"}`)},
	"setup_agent":      {Args: []byte(`{"soul":"Be brief.","description":"A test agent."}`)},
	"update_agent":     {Args: []byte(`{"description":"Updated."}`)},
	"tool_search":      {Args: []byte(`{"query":"select:slack_post_message"}`), Live: true},
	"review_skill_package": {Args: []byte(`{"target":"inline://SKILL.md","inline_content":"---\nname: demo\ndescription: Demo. Use in tests.\n---\n\nBody.\n"}`),
		Live: true},
}

// TestToolContract runs the contract suite over every tool source:
// config tools from the default registry, the conditional built-ins, the
// tools the lead-agent factory adds and invoke_acp_agent.
func TestToolContract(t *testing.T) {
	tools, env := contractTools(t)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	for name := range contractSamples {
		if !slices.Contains(names, name) {
			t.Errorf("sample for %q, which was not assembled (have %v)", name, names)
		}
	}
	// Every tool the default registry can build must be in the list, so
	// that a newly registered tool is checked too. (antler:command tools
	// are named by their entry; "shout" is one.)
	reg := toolset.DefaultRegistry()
	for _, use := range reg.ToolUses() {
		if use == "antler:command" {
			continue
		}
		tl, err := reg.BuildTool(t.Context(), env, config.ToolEntry{Use: use})
		if err != nil {
			tl, err = reg.BuildTool(t.Context(), env, config.ToolEntry{Use: use, Options: map[string]any{"api_key": "unused"}})
		}
		if err != nil {
			t.Errorf("%s: cannot build it to check its name: %v", use, err)
			continue
		}
		if !slices.Contains(names, tl.Name) {
			t.Errorf("%s builds %q, which the contract config does not enable", use, tl.Name)
		}
	}
	tooltest.Run(t, tools, tooltest.Options{
		Samples: contractSamples,
		Call: func(tl *tool.Tool) *tool.Call {
			return &tool.Call{ID: "call_contract", Name: tl.Name, ThreadID: contractThread, UserID: contractUser,
				State: &thread.State{}, Context: map[string]any{"agent_name": "contract-agent"}}
		},
		Known: []tooltest.Known{{Tool: "invoke_acp_agent", Rule: tooltest.RuleCancel, Contains: `does not start with "Error: "`,
			Reason: "DeerFlow's text \"Error invoking ACP agent '{a}': ...\" is kept verbatim (docs/differences.md); " +
				"the agent loop classifies IsError results without the prefix"}},
	})
}
