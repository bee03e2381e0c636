package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// envOf returns a lookupEnv backed by a map.
func envOf(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := kv[k]
		return v, ok
	}
}

// anyEnv provides every variable, as "<NAME>-value".
func anyEnv(k string) (string, bool) { return k + "-value", true }

func mustParse(t *testing.T, src string, env func(string) (string, bool)) *Config {
	t.Helper()
	c, err := Parse("config.yaml", []byte(src), env)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestParseDeerFlowExample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "deerflow-config.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse("deerflow-config.example.yaml", data, anyEnv)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got, want := len(c.Models), 5; got != want {
		t.Errorf("len(Models) = %d, want %d", got, want)
	}
	m, ok := c.DefaultModel()
	if !ok || m.Name != "gpt-4o" || m.Options["api_key"] != "OPENAI_API_KEY-value" || !m.SupportsVision {
		t.Errorf("DefaultModel = %+v, %v", m, ok)
	}
	var uses []string
	for _, tl := range c.Tools {
		uses = append(uses, tl.Name+"="+tl.Use)
	}
	wantUses := []string{
		"web_search=deerflow.community.ddg_search.tools:web_search_tool",
		"web_fetch=deerflow.community.jina_ai.tools:web_fetch_tool",
		"image_search=deerflow.community.image_search.tools:image_search_tool",
		"ls=deerflow.sandbox.tools:ls_tool",
		"read_file=deerflow.sandbox.tools:read_file_tool",
		"glob=deerflow.sandbox.tools:glob_tool",
		"grep=deerflow.sandbox.tools:grep_tool",
		"write_file=deerflow.sandbox.tools:write_file_tool",
		"str_replace=deerflow.sandbox.tools:str_replace_tool",
		"bash=deerflow.sandbox.tools:bash_tool",
	}
	if diff := cmp.Diff(wantUses, uses); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	wantIgnored := []string{
		"agent_storage", "channels",
		"log_level", "logging", "max_recursion_limit",
		"run_events", "run_ownership",
	}
	if diff := cmp.Diff(wantIgnored, c.Ignored); diff != "" {
		t.Errorf("Ignored (-want +got):\n%s", diff)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("Warnings = %v; want none", c.Warnings)
	}
	if c.IsHostBashAllowed() {
		t.Error("IsHostBashAllowed = true for local sandbox without allow_host_bash")
	}
	if got := c.ACPAgentNames(); !cmp.Equal(got, []string{"claude_code"}) {
		t.Errorf("ACPAgentNames = %v", got)
	}
	if a := c.ACPAgents["claude_code"]; a.TimeoutSeconds != 1800 || a.Model != nil || len(a.Args) != 2 {
		t.Errorf("claude_code = %+v", a)
	}
	if got := c.Subagents.AgentNames(); !cmp.Equal(got, []string{"bash", "general-purpose"}) {
		t.Errorf("Subagents.AgentNames = %v", got)
	}
	if c.Database.SqliteDir != ".deer-flow/data" || c.Uploads.PDFConverter != "auto" {
		t.Errorf("Database = %+v, Uploads = %+v", c.Database, c.Uploads)
	}
}

func TestParseExampleWithoutEnvNamesFirstMissingVariable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "deerflow-config.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse("config.yaml", data, nil)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Parse error = %v, want *Error", err)
	}
	if ce.Key != "models[0].api_key" || !strings.Contains(ce.Msg, "OPENAI_API_KEY") || ce.Line == 0 {
		t.Errorf("first error = %+v", ce)
	}
	if !errors.Is(err, ErrEnvNotSet) {
		t.Errorf("errors.Is(err, ErrEnvNotSet) = false for %v", err)
	}
	// Ignored sections are not resolved: channels.slack.bot_token is not reported.
	if strings.Contains(err.Error(), "SLACK_BOT_TOKEN") {
		t.Errorf("error mentions a variable of an ignored section: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		env  map[string]string
		want []string // substrings of err.Error()
	}{
		{
			name: "missing env var",
			src:  "models:\n  - name: gpt\n    use: langchain_openai:ChatOpenAI\n    model: gpt-4o\n    api_key: $OPENAI_KEY\n",
			want: []string{"config.yaml:5: models[0].api_key: environment variable OPENAI_KEY is not set"},
		},
		{
			name: "wrong type",
			src:  "sandbox:\n  use: deerflow.sandbox.local:LocalSandboxProvider\n  bash_command_timeout: thirty\n",
			want: []string{"config.yaml:3: sandbox.bash_command_timeout: expected integer, got string \"thirty\""},
		},
		{
			name: "section of wrong kind",
			src:  "tool_search:\n  - enabled\n",
			want: []string{"config.yaml:2: tool_search: expected mapping, got list"},
		},
		{
			name: "yaml syntax error",
			src:  "tools:\n  - name: x\n    use: y: z\n",
			want: []string{"config.yaml:3: invalid YAML: mapping values are not allowed in this context"},
		},
		{
			name: "unknown key in sandbox",
			src:  "sandbox:\n  use: deerflow.sandbox.local:LocalSandboxProvider\n  alow_host_bash: true\n",
			want: []string{"config.yaml:3: sandbox.alow_host_bash: unknown key \"alow_host_bash\""},
		},
		{
			name: "unknown key in mount",
			src:  "sandbox:\n  mounts:\n    - host_path: /x\n      container_path: /mnt/x\n      readonly: true\n",
			want: []string{"config.yaml:5: sandbox.mounts[0].readonly: unknown key"},
		},
		{
			name: "unknown key in acp agent",
			src:  "acp_agents:\n  codex:\n    command: npx\n    description: d\n    timeout: 5\n",
			want: []string{"config.yaml:5: acp_agents.codex.timeout: unknown key"},
		},
		{
			name: "unknown key in custom subagent",
			src:  "subagents:\n  custom_agents:\n    a:\n      description: d\n      system_prompt: s\n      prompt: x\n",
			want: []string{"config.yaml:6: subagents.custom_agents.a.prompt: unknown key"},
		},
		{
			name: "unknown key in tool_search",
			src:  "tool_search:\n  enable: true\n",
			want: []string{"config.yaml:2: tool_search.enable: unknown key"},
		},
		{
			name: "model missing use",
			src:  "models:\n  - name: a\n    model: m\n",
			want: []string{"config.yaml:2: models[0].use: is required"},
		},
		{
			name: "tool missing group",
			src:  "tools:\n  - name: ls\n    use: deerflow.sandbox.tools:ls_tool\n  - name: bash\n    use: deerflow.sandbox.tools:bash_tool\n    group: \"\"\n",
			want: []string{"config.yaml:2: tools[0].group: is required", "config.yaml:6: tools[1].group: must not be empty"},
		},
		{
			name: "duplicate key",
			src:  "sandbox:\n  use: a\n  use: b\n",
			want: []string{"config.yaml:3: sandbox.use: duplicate key (first defined at line 2)"},
		},
		{
			name: "duplicate top-level section",
			src:  "tools: []\ntools: []\n",
			want: []string{"config.yaml:2: tools: duplicate key (first defined at line 1)"},
		},
		{
			name: "top level not a mapping",
			src:  "- a\n- b\n",
			want: []string{"config.yaml:1: top level must be a mapping"},
		},
		{
			name: "max_total_per_run out of range",
			src:  "subagents:\n  max_total_per_run: 0\n",
			want: []string{"config.yaml:2: subagents.max_total_per_run: must be at least 1, got 0"},
		},
		{
			name: "acp agent missing command",
			src:  "acp_agents:\n  codex:\n    description: d\n",
			want: []string{"config.yaml:2: acp_agents.codex.command: is required"},
		},
		{
			name: "acp timeout below one",
			src:  "acp_agents:\n  codex:\n    command: c\n    description: d\n    timeout_seconds: 0\n",
			want: []string{"config.yaml:5: acp_agents.codex.timeout_seconds: must be at least 1, got 0"},
		},
		{
			name: "custom subagent missing system_prompt",
			src:  "subagents:\n  custom_agents:\n    a:\n      description: d\n",
			want: []string{"config.yaml:3: subagents.custom_agents.a.system_prompt: is required"},
		},
		{
			name: "unsupported database backend",
			src:  "database:\n  backend: memory\n",
			want: []string{"config.yaml:2: database.backend: unsupported backend \"memory\""},
		},
		{
			name: "postgres without url",
			src:  "database:\n  backend: postgres\n",
			want: []string{"config.yaml:1: database.postgres_url: is required"},
		},
		{
			name: "checkpoint retention below -1",
			src:  "database:\n  checkpoint_retention:\n    keep_latest: -2\n",
			want: []string{"config.yaml:3: database.checkpoint_retention.keep_latest: must be at least -1, got -2"},
		},
		{
			name: "unknown checkpoint retention key",
			src:  "database:\n  checkpoint_retention:\n    keep: 5\n",
			want: []string{"config.yaml:3: database.checkpoint_retention.keep: unknown key"},
		},
		{
			name: "storage_subdir with slash",
			src:  "tool_output:\n  storage_subdir: a/b\n",
			want: []string{"config.yaml:2: tool_output.storage_subdir: must be a single path segment"},
		},
		{
			name: "relative container path",
			src:  "sandbox:\n  mounts:\n    - host_path: /x\n      container_path: mnt/x\n",
			want: []string{"config.yaml:4: sandbox.mounts[0].container_path: must be an absolute path"},
		},
		{
			name: "missing var in sandbox environment",
			src:  "sandbox:\n  use: deerflow.community.aio_sandbox:AioSandboxProvider\n  environment:\n    API_KEY: $MY_API_KEY\n",
			want: []string{"config.yaml:4: sandbox.environment.API_KEY: environment variable MY_API_KEY is not set"},
		},
		{
			name: "several errors are all reported",
			src:  "models:\n  - name: a\n    use: u\n    model: m\n    api_key: $A\n    base_url: $B\n",
			want: []string{"models[0].api_key: environment variable A", "models[0].base_url: environment variable B"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("config.yaml", []byte(tt.src), envOf(tt.env))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", c)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error %T is not an *Error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error = %q\nwant substring %q", err, w)
				}
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	cause := errors.New("boom")
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"all parts", &Error{File: "config.yaml", Line: 3, Key: "models[0].api_key", Msg: "bad"}, "config.yaml:3: models[0].api_key: bad"},
		{"no line", &Error{File: "config.yaml", Key: "models[0].api_key", Msg: "environment variable OPENAI_KEY is not set"}, "config.yaml: models[0].api_key: environment variable OPENAI_KEY is not set"},
		{"no key", &Error{File: "c.yaml", Line: 1, Msg: "bad"}, "c.yaml:1: bad"},
		{"no file", &Error{Line: 2, Key: "k", Msg: "m"}, "line 2: k: m"},
		{"message from cause", &Error{File: "f", Err: cause}, "f: boom"},
		{"only message", &Error{Msg: "m"}, "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
	if !errors.Is(&Error{Err: cause}, cause) {
		t.Error("Unwrap does not expose the cause")
	}
}

func TestParseEmptyIsDefault(t *testing.T) {
	for _, src := range []string{"", "# only a comment\n", "null\n", "---\n", "sandbox: null\ntools: ~\nmodels:\n"} {
		c := mustParse(t, src, nil)
		if diff := cmp.Diff(Default(), c); diff != "" {
			t.Errorf("Parse(%q) differs from Default() (-want +got):\n%s", src, diff)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := Default()
	checks := []struct {
		name      string
		got, want any
	}{
		{"tool_search.auto_promote_top_k", c.ToolSearch.AutoPromoteTopK, 3},
		{"tool_search.max_results", c.ToolSearch.MaxResults, 5},
		{"tool_output.externalize_min_chars", c.ToolOutput.ExternalizeMinChars, 12000},
		{"tool_output.storage_subdir", c.ToolOutput.StorageSubdir, ".tool-results"},
		{"tool_output.exempt_tools", c.ToolOutput.ExemptTools, []string{"read_file", "read_file_tool"}},
		{"read_before_write.enabled", c.ReadBeforeWrite.Enabled, true},
		{"token_usage.enabled", c.TokenUsage.Enabled, true},
		{"loop_detection.tool_freq_hard_limit", c.LoopDetection.ToolFreqHardLimit, 50},
		{"sandbox.use", c.Sandbox.Use, LocalSandboxProvider},
		{"sandbox.bash_output_max_chars", c.Sandbox.BashOutputMaxChars, 20000},
		{"sandbox.read_file_output_max_chars", c.Sandbox.ReadFileOutputMaxChars, 50000},
		{"sandbox.bash_command_timeout", c.Sandbox.BashCommandTimeout, 600},
		{"sandbox.write_file_max_bytes", c.Sandbox.WriteFileMaxBytes, int64(10 << 20)},
		{"skills.container_path", c.Skills.ContainerPath, "/mnt/skills"},
		{"skill_scan.enabled", c.SkillScan.Enabled, true},
		{"skill_evolution.security_fail_closed", c.SkillEvolution.SecurityFailClosed, true},
		{"subagents.timeout_seconds", c.Subagents.TimeoutSeconds, 1800},
		{"subagents.max_total_per_run", c.Subagents.MaxTotalPerRun, 6},
		{"subagents.max_concurrent", c.Subagents.MaxConcurrent, 3},
		{"subagents.workers", c.Subagents.Workers, 3},
		{"subagents.token_budget.max_tokens", c.Subagents.TokenBudget.MaxTokens, 2_000_000},
		{"token_budget", c.TokenBudget, TokenBudget{MaxTokens: 200_000, WarnThreshold: 0.8, HardStopThreshold: 1.0}},
		{"database.backend", c.Database.Backend, "sqlite"},
		{"title", c.Title, Title{Enabled: true, MaxWords: 6, MaxChars: 60, PromptTemplate: DefaultTitlePrompt}},
		{"uploads.max_file_size", c.Uploads.MaxFileSize, int64(52428800)},
		{"host bash", c.IsHostBashAllowed(), false},
	}
	for _, ck := range checks {
		if !cmp.Equal(ck.got, ck.want) {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
}

func TestEntryDefaultsAndClamps(t *testing.T) {
	src := `
tool_search: {enabled: true, auto_promote_top_k: 9}
subagents:
  max_concurrent: 10
  agents:
    bash: {max_turns: 80}
  custom_agents:
    analysis:
      description: Data analysis
      system_prompt: You analyse data.
      tools: []
acp_agents:
  codex: {command: npx, description: Codex}
`
	c := mustParse(t, src, nil)
	if c.ToolSearch.AutoPromoteTopK != 5 || !c.ToolSearch.Enabled {
		t.Errorf("ToolSearch = %+v, want top_k clamped to 5", c.ToolSearch)
	}
	if c.Subagents.MaxConcurrent != 10 {
		t.Errorf("MaxConcurrent = %d, want 10 (Antler allows more than DeerFlow's 4)", c.Subagents.MaxConcurrent)
	}
	want := CustomSubagent{
		Description:     "Data analysis",
		SystemPrompt:    "You analyse data.",
		Tools:           []string{},
		DisallowedTools: []string{"task", "ask_clarification", "present_files"},
		Model:           "inherit",
		MaxTurns:        50,
		TimeoutSeconds:  900,
		Line:            9,
	}
	if diff := cmp.Diff(want, c.Subagents.CustomAgents["analysis"]); diff != "" {
		t.Errorf("custom agent (-want +got):\n%s", diff)
	}
	o := c.Subagents.Agents["bash"]
	if o.MaxTurns == nil || *o.MaxTurns != 80 || o.TimeoutSeconds != nil || o.Skills != nil {
		t.Errorf("override = %+v", o)
	}
	if a := c.ACPAgents["codex"]; a.TimeoutSeconds != 1800 || a.Env != nil || a.AutoApprovePermissions {
		t.Errorf("acp agent = %+v", a)
	}
	c = mustParse(t, "tool_search: {auto_promote_top_k: 0}\n", nil)
	if c.ToolSearch.AutoPromoteTopK != 1 {
		t.Errorf("AutoPromoteTopK = %d, want clamped to 1", c.ToolSearch.AutoPromoteTopK)
	}
}

func TestExtraKeysKept(t *testing.T) {
	src := `
models:
  - name: ds
    use: deerflow.models.patched_deepseek:PatchedChatDeepSeek
    model: deepseek-v4
    api_base: $DS_BASE
    max_tokens: 8192
    temperature: 0.5
    when_thinking_enabled:
      extra_body: {thinking: {type: enabled}}
tools:
  - name: web_search
    group: web
    use: deerflow.community.tavily.tools:web_search_tool
    max_results: 7
    api_key: $TAVILY_API_KEY
tool_groups:
  - name: web
    description: Web tools
`
	c := mustParse(t, src, envOf(map[string]string{"DS_BASE": "https://ds.example/v1", "TAVILY_API_KEY": "0123"}))
	wantModel := map[string]any{
		"api_base":              "https://ds.example/v1",
		"max_tokens":            8192,
		"temperature":           0.5,
		"when_thinking_enabled": map[string]any{"extra_body": map[string]any{"thinking": map[string]any{"type": "enabled"}}},
	}
	if diff := cmp.Diff(wantModel, c.Models[0].Options); diff != "" {
		t.Errorf("model options (-want +got):\n%s", diff)
	}
	// A resolved variable stays a string even when it looks like a number.
	wantTool := map[string]any{"max_results": 7, "api_key": "0123"}
	if diff := cmp.Diff(wantTool, c.Tools[0].Options); diff != "" {
		t.Errorf("tool options (-want +got):\n%s", diff)
	}
	if c.Tools[0].Line != 12 || c.Tools[0].Index != 0 || c.Models[0].Line != 3 {
		t.Errorf("positions: tool line %d index %d, model line %d", c.Tools[0].Line, c.Tools[0].Index, c.Models[0].Line)
	}
	if g, ok := c.ToolGroup("web"); !ok || g.Options["description"] != "Web tools" {
		t.Errorf("ToolGroup(web) = %+v, %v", g, ok)
	}
}

func TestSandboxOptions(t *testing.T) {
	src := `
sandbox:
  use: deerflow.community.aio_sandbox:AioSandboxProvider
  image: all-in-one-sandbox:1.11.0
  port: 8080
  replicas: 3
  environment:
    NODE_ENV: production
    API_KEY: $MY_API_KEY
  ownership: {type: memory}
  mounts:
    - {host_path: shared, container_path: /home/user/shared, read_only: true}
`
	c := mustParse(t, src, envOf(map[string]string{"MY_API_KEY": "k"}))
	want := map[string]any{
		"image":       "all-in-one-sandbox:1.11.0",
		"port":        8080,
		"replicas":    3,
		"environment": map[string]any{"NODE_ENV": "production", "API_KEY": "k"},
		"ownership":   map[string]any{"type": "memory"},
	}
	if diff := cmp.Diff(want, c.Sandbox.Options); diff != "" {
		t.Errorf("Sandbox.Options (-want +got):\n%s", diff)
	}
	if !c.IsHostBashAllowed() {
		t.Error("container provider should allow bash")
	}
	if diff := cmp.Diff([]Mount{{HostPath: "shared", ContainerPath: "/home/user/shared", ReadOnly: true}}, c.Sandbox.Mounts); diff != "" {
		t.Errorf("Mounts (-want +got):\n%s", diff)
	}
}

func TestIgnoredSections(t *testing.T) {
	src := "run_events:\n  backend: db\n  token: $UNSET\nstream_bridge: null\nlog_level: debug\n"
	c := mustParse(t, src, nil)
	if diff := cmp.Diff([]string{"log_level", "run_events", "stream_bridge"}, c.Ignored); diff != "" {
		t.Errorf("Ignored (-want +got):\n%s", diff)
	}
}

func TestWarnings(t *testing.T) {
	src := "config_version: 20\nacp_agents:\n  claude:\n    command: npx\n    description: Claude\n    env:\n      ANTHROPIC_API_KEY: $ANTHROPIC_API_KEY\n"
	c := mustParse(t, src, nil)
	if got := c.ACPAgents["claude"].Env["ANTHROPIC_API_KEY"]; got != "" {
		t.Errorf("missing ACP env var = %q, want empty", got)
	}
	want := []string{
		"config.yaml: acp_agents.claude.env.ANTHROPIC_API_KEY: environment variable ANTHROPIC_API_KEY is not set; using an empty value",
		"config.yaml: config_version 20 is older than 34; newer keys take their defaults",
	}
	if diff := cmp.Diff(want, c.Warnings); diff != "" {
		t.Errorf("Warnings (-want +got):\n%s", diff)
	}
}

func TestIsHostBashAllowed(t *testing.T) {
	tests := []struct {
		name string
		cfg  *Config
		want bool
	}{
		{"nil config", nil, false},
		{"no sandbox use", &Config{}, false},
		{"default local", Default(), false},
		{"local allowed", &Config{Sandbox: Sandbox{Use: LocalSandboxProvider, AllowHostBash: true}}, true},
		{"local long path", &Config{Sandbox: Sandbox{Use: "deerflow.sandbox.local.local_sandbox_provider:LocalSandboxProvider"}}, false},
		{"aio provider", &Config{Sandbox: Sandbox{Use: "deerflow.community.aio_sandbox:AioSandboxProvider"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.IsHostBashAllowed(); got != tt.want {
				t.Errorf("IsHostBashAllowed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLookupsFirstWins(t *testing.T) {
	src := `
models:
  - {name: a, use: u1, model: m1}
  - {name: b, use: u2, model: m2}
  - {name: a, use: u3, model: m3}
tools:
  - {name: t, group: g, use: x1}
  - {name: t, group: g, use: x2}
`
	c := mustParse(t, src, nil)
	if m, ok := c.Model("a"); !ok || m.Use != "u1" {
		t.Errorf("Model(a) = %+v, %v; want first", m, ok)
	}
	if _, ok := c.Model("zz"); ok {
		t.Error("Model(zz) found")
	}
	if tl, ok := c.Tool("t"); !ok || tl.Use != "x1" {
		t.Errorf("Tool(t) = %+v, %v; want first", tl, ok)
	}
	if m, ok := c.DefaultModel(); !ok || m.Name != "a" {
		t.Errorf("DefaultModel = %+v", m)
	}
	if _, ok := Default().DefaultModel(); ok {
		t.Error("Default has a default model")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	src := "sandbox:\n  mounts:\n    - {host_path: data, container_path: /mnt/data}\nskills:\n  path: my-skills\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != path || c.Dir != dir {
		t.Errorf("Path, Dir = %q, %q", c.Path, c.Dir)
	}
	if got, want := c.Sandbox.Mounts[0].HostPath, filepath.Join(dir, "data"); got != want {
		t.Errorf("mount host path = %q, want %q", got, want)
	}
	if got, want := c.SkillsPath(nil), filepath.Join(dir, "my-skills"); got != want {
		t.Errorf("SkillsPath = %q, want %q", got, want)
	}

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want fs.ErrNotExist", err)
	}
	var ce *Error
	if !errors.As(err, &ce) || !strings.HasSuffix(ce.File, "missing.yaml") {
		t.Errorf("Load(missing) error = %#v", err)
	}
}

func TestSkillsPath(t *testing.T) {
	c := Default()
	c.Dir = "/srv/antler"
	env := func(string) string { return "" }
	if got := c.SkillsPath(env); got != "/srv/antler/skills" {
		t.Errorf("SkillsPath = %q", got)
	}
	env = func(k string) string {
		if k == "DEER_FLOW_SKILLS_PATH" {
			return "/opt/skills"
		}
		return ""
	}
	if got := c.SkillsPath(env); got != "/opt/skills" {
		t.Errorf("SkillsPath with env = %q", got)
	}
}

func TestTracingSection(t *testing.T) {
	src := "tracing:\n  langsmith: {enabled: true, api_key: k, project: p}\n  langfuse: {enabled: false, host: https://lf.example}\n"
	c := mustParse(t, src, nil)
	want := Tracing{LangSmith: LangSmithTracing{Enabled: true, APIKey: "k", Project: "p"},
		Langfuse: LangfuseTracing{Host: "https://lf.example"}}
	if diff := cmp.Diff(want, c.Tracing); diff != "" {
		t.Errorf("Tracing (-want +got):\n%s", diff)
	}
	if strings.Contains(strings.Join(c.Ignored, ","), "tracing") {
		t.Errorf("tracing is reported ignored: %v", c.Ignored)
	}
	_, err := Parse("config.yaml", []byte("tracing:\n  monocle: {enabled: true}\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "tracing.monocle.enabled") {
		t.Errorf("monocle enabled: err = %v, want one naming tracing.monocle.enabled", err)
	}
	_, err = Parse("config.yaml", []byte("tracing:\n  langsmith: {enabld: true}\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "enabld") {
		t.Errorf("typo: err = %v, want one naming enabld", err)
	}
}
