package config

import (
	"maps"
	"slices"
	"strings"
)

// exampleConfigVersion is the config_version of the DeerFlow example config
// that this package follows. A lower config_version only adds a warning.
const exampleConfigVersion = 34

// Provider and storage identifiers used as defaults.
const (
	LocalSandboxProvider = "deerflow.sandbox.local:LocalSandboxProvider"
	localSkillStorage    = "deerflow.skills.storage.local_skill_storage:LocalSkillStorage"
)

// Config is a loaded config.yaml. The zero value is not useful; start from
// [Default], [Load] or [Parse].
type Config struct {
	Path string `yaml:"-"` // absolute path it was loaded from ("" for Default)
	Dir  string `yaml:"-"` // directory of Path

	ConfigVersion int         `yaml:"config_version"`
	Models        []Model     `yaml:"models"`      // first is the default model
	ToolGroups    []ToolGroup `yaml:"tool_groups"` // informational
	Tools         []ToolEntry `yaml:"tools"`

	ToolSearch      ToolSearch          `yaml:"tool_search"`
	ToolOutput      ToolOutput          `yaml:"tool_output"`
	ReadBeforeWrite ReadBeforeWrite     `yaml:"read_before_write"`
	LoopDetection   LoopDetection       `yaml:"loop_detection"`
	ToolProgress    ToolProgress        `yaml:"tool_progress"`
	Title           Title               `yaml:"title"`
	Summarization   Summarization       `yaml:"summarization"`
	TokenUsage      TokenUsage          `yaml:"token_usage"`
	Sandbox         Sandbox             `yaml:"sandbox"`
	Skills          Skills              `yaml:"skills"`
	SkillScan       SkillScan           `yaml:"skill_scan"`
	SkillEvolution  SkillEvolution      `yaml:"skill_evolution"`
	Subagents       Subagents           `yaml:"subagents"`
	ACPAgents       map[string]ACPAgent `yaml:"acp_agents"`
	Database        Database            `yaml:"database"`
	Uploads         Uploads             `yaml:"uploads"`
	Gateway         Gateway             `yaml:"gateway"` // Antler's own section
	Guardrails      Guardrails          `yaml:"guardrails"`
	Authorization   Authorization       `yaml:"authorization"`
	ToolPolicy      ToolPolicy          `yaml:"tool_policy"` // Antler's own section
	AgentsAPI       AgentsAPI           `yaml:"agents_api"`
	// Memory is DeerFlow's long-term memory (memory.go); off without the
	// section.
	Memory Memory `yaml:"memory"`
	// Tracing is DeerFlow's LangSmith and Langfuse tracing, sent over
	// OTLP (tracing.go).
	Tracing Tracing `yaml:"tracing"`

	// SafetyFinishReason drops the tool calls of a response the provider
	// stopped for safety (safety_finish_reason.go).
	SafetyFinishReason SafetyFinishReason `yaml:"safety_finish_reason"`

	// LLMCall and CircuitBreaker shape the retries, the concurrency and
	// the fast failure of model calls (llm_call.go).
	LLMCall        LLMCall        `yaml:"llm_call"`
	CircuitBreaker CircuitBreaker `yaml:"circuit_breaker"`

	// InputPolish and Suggestions serve the frontend's draft rewriting
	// and follow-up questions (input_polish.go, suggestions.go).
	InputPolish InputPolish `yaml:"input_polish"`
	Suggestions Suggestions `yaml:"suggestions"`

	// MCPTasks runs the durable MCP background tasks (mcp_tasks.go).
	MCPTasks MCPTasks `yaml:"mcp_tasks"`

	// Scheduler runs DeerFlow's scheduled tasks (scheduler.go).
	Scheduler Scheduler `yaml:"scheduler"`

	// TokenBudget is DeerFlow's per-run token budget of the lead agent
	// (agent.TokenBudget), with DeerFlow's defaults: enabled false,
	// max_tokens 200000, warn_threshold 0.8, hard_stop_threshold 1.0.
	TokenBudget TokenBudget `yaml:"token_budget"`

	// AllowUnenforced names DeerFlow sections that restrict what runs or
	// who may run it, which Antler does not enforce, and which the
	// operator accepts going unenforced: without it such a section stops
	// serve, run and chat (see IgnoredSection). Each section is named on
	// its own, so that no opt-out covers a section added later.
	AllowUnenforced []string `yaml:"allow_unenforced"` // Antler's own key

	// IgnoredSections are the sections of Ignored, sorted by name, each
	// with its line and whether it restricts.
	IgnoredSections []IgnoredSection `yaml:"-"`
	// Ignored lists, sorted, the top-level DeerFlow sections present in the
	// file that Antler accepts but does not implement (memory, tracing, ...).
	// A top-level key that is neither DeerFlow's nor Antler's is an error.
	Ignored []string `yaml:"-"`
	// Warnings are soft problems (an old config_version, a missing $VAR in
	// acp_agents env) that did not stop loading.
	Warnings []string `yaml:"-"`
}

// Model is one entry of models[].
type Model struct {
	Name                    string `yaml:"name"`
	Use                     string `yaml:"use"`
	Model                   string `yaml:"model"`
	DisplayName             string `yaml:"display_name"`
	Description             string `yaml:"description"`
	SupportsVision          bool   `yaml:"supports_vision"`
	SupportsThinking        bool   `yaml:"supports_thinking"`
	SupportsReasoningEffort bool   `yaml:"supports_reasoning_effort"`
	// Options holds every other key of the entry (api_key, base_url,
	// api_base, max_tokens, temperature, timeout, when_thinking_enabled,
	// context_window, ...), with $VAR values already resolved.
	Options map[string]any `yaml:",inline"`
	Line    int            `yaml:"-"` // line of the entry in the file
	// KeyLines is the line of each key of the entry.
	KeyLines map[string]int `yaml:"-"`
}

// ToolGroup is one entry of tool_groups[].
type ToolGroup struct {
	Name    string         `yaml:"name"`
	Options map[string]any `yaml:",inline"`
	Line    int            `yaml:"-"`
}

// ToolEntry is one entry of tools[].
type ToolEntry struct {
	Name  string `yaml:"name"`
	Group string `yaml:"group"`
	Use   string `yaml:"use"`
	// Options holds every other key (max_results, timeout, api_key, ...).
	Options map[string]any `yaml:",inline"`
	Line    int            `yaml:"-"` // line of the entry in the file
	Index   int            `yaml:"-"` // position in tools[]
	// KeyLines is the line of each key of the entry, so that the tool's
	// factory can place an error about one of its options.
	KeyLines map[string]int `yaml:"-"`
}

// ToolSearch is the tool_search section. Defer, AutoContextPercent,
// AutoToolCount and Tools are Antler's own keys (tool_search.go): which
// tools are deferred, and when.
type ToolSearch struct {
	Enabled         bool `yaml:"enabled"`            // default false
	AutoPromoteTopK int  `yaml:"auto_promote_top_k"` // default 3, clamped to 1..5
	MaxResults      int  `yaml:"max_results"`        // Antler: default 5, >= 1
	// Defer is when the MCP tools are deferred: "always" (the default,
	// DeerFlow's behaviour) or "auto" (only when their definitions would
	// take more than auto_context_percent of the run model's context
	// window, or number more than auto_tool_count).
	Defer string `yaml:"defer"`
	// AutoContextPercent is the share of the context window, in percent
	// (default 10, 0 < p <= 100), that the definitions of the tools in
	// question may take before auto deferral defers them.
	AutoContextPercent float64 `yaml:"auto_context_percent"`
	// AutoToolCount defers the tools in question under auto when there are
	// more of them than this (default 0: no count rule, only the share).
	AutoToolCount int `yaml:"auto_tool_count"`
	// Tools sets the deferral of single tools by their bound name, of any
	// source (config, built-in, MCP, ACP): "always", "never" or "auto". It
	// wins over the server's defer and the section's; tool_search itself
	// cannot be named.
	Tools map[string]string `yaml:"tools"`
	// ProviderSearch hands the search to the model's provider where it
	// has its own (Anthropic's tool search tool): "regex" or "bm25" sends
	// every deferred tool with defer_loading and that search tool instead
	// of binding tool_search; "" (the default) always searches here.
	// Models without one search here either way.
	ProviderSearch string `yaml:"provider_search"`
	// Embeddings turns on hybrid search: dense ranks from an
	// OpenAI-compatible embeddings endpoint fused with the lexical ones
	// (Antler's own; off when its model is unset).
	Embeddings ToolSearchEmbeddings `yaml:"embeddings"`
}

// ToolOutput is the tool_output section, DeerFlow's tool output budget
// (agent.ToolOutputBudget): on by default; a tool result longer than
// externalize_min_chars characters is saved under the thread's outputs in
// storage_subdir and replaced by a typed synopsis naming the file, or cut
// to fallback_head_chars + fallback_tail_chars when it cannot be saved.
// Antler's 256 KiB ceiling on one tool result applies whatever it says.
type ToolOutput struct {
	Enabled             bool           `yaml:"enabled"`               // true
	ExternalizeMinChars int            `yaml:"externalize_min_chars"` // 12000
	PreviewHeadChars    int            `yaml:"preview_head_chars"`    // 2000
	PreviewTailChars    int            `yaml:"preview_tail_chars"`    // 1000
	FallbackMaxChars    int            `yaml:"fallback_max_chars"`    // 30000
	FallbackHeadChars   int            `yaml:"fallback_head_chars"`   // 8000
	FallbackTailChars   int            `yaml:"fallback_tail_chars"`   // 3000
	StorageSubdir       string         `yaml:"storage_subdir"`        // ".tool-results", one path segment
	ExemptTools         []string       `yaml:"exempt_tools"`          // [read_file, read_file_tool]
	ToolOverrides       map[string]int `yaml:"tool_overrides"`        // tool name -> chars
}

// ReadBeforeWrite is the read_before_write section.
type ReadBeforeWrite struct {
	Enabled bool `yaml:"enabled"` // default true
}

// TokenUsage is the token_usage section. Runs always record their token
// usage; Enabled tells the frontend (GET /api/models token_usage.enabled)
// to show it, as DeerFlow's flag does.
type TokenUsage struct {
	Enabled bool `yaml:"enabled"` // default true
}

// LoopDetection is the loop_detection section.
type LoopDetection struct {
	Enabled           bool                        `yaml:"enabled"`              // true
	WarnThreshold     int                         `yaml:"warn_threshold"`       // 3
	HardLimit         int                         `yaml:"hard_limit"`           // 5
	WindowSize        int                         `yaml:"window_size"`          // 20
	MaxTrackedThreads int                         `yaml:"max_tracked_threads"`  // 100
	ToolFreqWarn      int                         `yaml:"tool_freq_warn"`       // 30
	ToolFreqHardLimit int                         `yaml:"tool_freq_hard_limit"` // 50
	ToolFreqOverrides map[string]ToolFreqOverride `yaml:"tool_freq_overrides"`
}

// ToolFreqOverride overrides the per-tool frequency thresholds of one tool.
type ToolFreqOverride struct {
	Warn      int `yaml:"warn"`       // >= 1
	HardLimit int `yaml:"hard_limit"` // >= 1
}

// Sandbox is the sandbox section.
type Sandbox struct {
	Use           string  `yaml:"use"`             // default LocalSandboxProvider
	AllowHostBash bool    `yaml:"allow_host_bash"` // default false
	Mounts        []Mount `yaml:"mounts"`
	// Output limits in characters; 0 disables truncation.
	BashOutputMaxChars     int `yaml:"bash_output_max_chars"`      // 20000
	ReadFileOutputMaxChars int `yaml:"read_file_output_max_chars"` // 50000
	LsOutputMaxChars       int `yaml:"ls_output_max_chars"`        // 20000
	BashCommandTimeout     int `yaml:"bash_command_timeout"`       // seconds, 600, > 0
	// WriteFileMaxBytes (Antler) caps the content of one write_file or
	// str_replace result, default 10 MiB, > 0.
	WriteFileMaxBytes int64 `yaml:"write_file_max_bytes"`
	// Options holds the container-provider keys DeerFlow defines (image,
	// port, replicas, idle_timeout, container_prefix, environment, ownership,
	// thread_data_mounts, provisioner_url, ...). Any other key is an error.
	Options map[string]any `yaml:"-"`
}

// Mount is one entry of sandbox.mounts[].
type Mount struct {
	HostPath      string `yaml:"host_path"`      // relative paths are resolved against Config.Dir
	ContainerPath string `yaml:"container_path"` // absolute
	ReadOnly      bool   `yaml:"read_only"`
}

// Skills is the skills section.
type Skills struct {
	Use               string `yaml:"use"`                // default LocalSkillStorage
	Path              string `yaml:"path"`               // host skills dir; "" = see Config.SkillsPath
	ContainerPath     string `yaml:"container_path"`     // default "/mnt/skills"
	DeferredDiscovery bool   `yaml:"deferred_discovery"` // default false
}

// SkillScan is the skill_scan section.
type SkillScan struct {
	Enabled bool `yaml:"enabled"` // default true
}

// SkillEvolution is the skill_evolution section.
type SkillEvolution struct {
	Enabled             bool   `yaml:"enabled"`               // default false
	ModerationModelName string `yaml:"moderation_model_name"` // "" = default model
	SecurityFailClosed  bool   `yaml:"security_fail_closed"`  // default true
}

// Subagents is the subagents section.
type Subagents struct {
	TimeoutSeconds int `yaml:"timeout_seconds"`   // built-ins, 1800, >= 1
	MaxTurns       int `yaml:"max_turns"`         // global override for built-ins; 0 = unset
	MaxTotalPerRun int `yaml:"max_total_per_run"` // 6, >= 1 (DeerFlow: 1..50)
	// MaxConcurrent (Antler) bounds task calls kept per model response,
	// default 3, raised to at least 1; unlike DeerFlow's fixed 1..4 it
	// may be larger for batch workloads.
	MaxConcurrent int `yaml:"max_concurrent"`
	// Workers (Antler) is the size of the background executor pool, default 3, >= 1.
	Workers      int                         `yaml:"workers"`
	TokenBudget  TokenBudget                 `yaml:"token_budget"`
	Agents       map[string]SubagentOverride `yaml:"agents"`
	CustomAgents map[string]CustomSubagent   `yaml:"custom_agents"`
}

// TokenBudget is a per-run token ceiling (DeerFlow's TokenBudgetConfig).
// The defaults are the subagents' (subagents.token_budget); the
// top-level token_budget section has DeerFlow's: off, 200000, 0.8, 1.0.
type TokenBudget struct {
	Enabled           bool    `yaml:"enabled"`             // true
	MaxTokens         int     `yaml:"max_tokens"`          // 2000000, >= 1000
	MaxInputTokens    int     `yaml:"max_input_tokens"`    // 0 or null = none
	MaxOutputTokens   int     `yaml:"max_output_tokens"`   // 0 or null = none
	WarnThreshold     float64 `yaml:"warn_threshold"`      // 0.7, 0..1
	HardStopThreshold float64 `yaml:"hard_stop_threshold"` // 1.0, 0..1, >= warn_threshold
}

// TokenBudgetOverride is a per-agent token_budget; nil fields inherit.
type TokenBudgetOverride struct {
	Enabled           *bool    `yaml:"enabled"`
	MaxTokens         *int     `yaml:"max_tokens"`
	MaxInputTokens    *int     `yaml:"max_input_tokens"`
	MaxOutputTokens   *int     `yaml:"max_output_tokens"`
	WarnThreshold     *float64 `yaml:"warn_threshold"`
	HardStopThreshold *float64 `yaml:"hard_stop_threshold"`
}

// SubagentOverride is one entry of subagents.agents; nil fields are unset.
type SubagentOverride struct {
	TimeoutSeconds *int                 `yaml:"timeout_seconds"`
	MaxTurns       *int                 `yaml:"max_turns"`
	Model          *string              `yaml:"model"`
	Skills         []string             `yaml:"skills"` // nil = unset, [] = none
	TokenBudget    *TokenBudgetOverride `yaml:"token_budget"`
	Line           int                  `yaml:"-"`
}

// CustomSubagent is one entry of subagents.custom_agents.
type CustomSubagent struct {
	Description     string   `yaml:"description"`      // required
	SystemPrompt    string   `yaml:"system_prompt"`    // required
	Tools           []string `yaml:"tools"`            // nil = inherit all
	DisallowedTools []string `yaml:"disallowed_tools"` // default [task, ask_clarification, present_files]
	Skills          []string `yaml:"skills"`           // nil = all, [] = none
	Model           string   `yaml:"model"`            // default "inherit"
	MaxTurns        int      `yaml:"max_turns"`        // 50, >= 1
	TimeoutSeconds  int      `yaml:"timeout_seconds"`  // 900, >= 1
	Line            int      `yaml:"-"`
}

// ACPAgent is one entry of acp_agents.
type ACPAgent struct {
	Command     string            `yaml:"command"` // required
	Args        []string          `yaml:"args"`
	Env         map[string]string `yaml:"env"`         // nil = inherit the default environment
	Description string            `yaml:"description"` // required
	Model       *string           `yaml:"model"`
	// AutoApprovePermissions picks the first allow option of permission
	// requests instead of cancelling them.
	AutoApprovePermissions bool `yaml:"auto_approve_permissions"`
	TimeoutSeconds         int  `yaml:"timeout_seconds"` // 1800, >= 1
	Line                   int  `yaml:"-"`
}

// Database is the database section.
type Database struct {
	Backend        string `yaml:"backend"`    // "sqlite" (default) or "postgres"
	SqliteDir      string `yaml:"sqlite_dir"` // as written; "" = under the Antler home
	PostgresURL    string `yaml:"postgres_url"`
	PostgresSchema string `yaml:"postgres_schema"`
	// PoolSize caps the Postgres connection pool of each process
	// (DeerFlow's key); 0 = pgx's default, max(4, CPUs).
	PoolSize int `yaml:"pool_size"`
	// RunLeaseSeconds is Antler's own key: how long a gateway replica's
	// lease on a running thread lives without a heartbeat (Postgres only);
	// 0 = 30.
	RunLeaseSeconds int `yaml:"run_lease_seconds"`
	// CheckpointRetention is Antler's own key: what the store keeps of
	// each thread's older checkpoints (DeerFlow keeps them all).
	CheckpointRetention CheckpointRetention `yaml:"checkpoint_retention"`
}

// CheckpointRetention is database.checkpoint_retention. A thread's
// newest KeepLatest checkpoints are all kept; of the older ones only
// those holding messages no later checkpoint has (the one before each
// summarization: the messages page rebuilds the visible history from
// them) and those written before Antler stored messages once; the rest
// are deleted, every 32 steps of the thread.
type CheckpointRetention struct {
	// KeepLatest is how many of each thread's newest checkpoints are kept
	// whole; 0 = 100, -1 keeps every checkpoint.
	KeepLatest int `yaml:"keep_latest"`
}

// Uploads is the uploads section.
type Uploads struct {
	MaxFiles             int    `yaml:"max_files"`              // 10
	MaxFileSize          int64  `yaml:"max_file_size"`          // 50 MiB
	MaxTotalSize         int64  `yaml:"max_total_size"`         // 100 MiB
	AutoConvertDocuments bool   `yaml:"auto_convert_documents"` // false
	PDFConverter         string `yaml:"pdf_converter"`          // "auto"
}

// Defaults of the sections, one function per section so Parse can start each
// section from them.

func defaultToolSearch() ToolSearch {
	return ToolSearch{AutoPromoteTopK: 3, MaxResults: 5, Defer: DeferAlways, AutoContextPercent: 10}
}

func defaultToolOutput() ToolOutput {
	return ToolOutput{
		Enabled:             true,
		ExternalizeMinChars: 12000,
		PreviewHeadChars:    2000,
		PreviewTailChars:    1000,
		FallbackMaxChars:    30000,
		FallbackHeadChars:   8000,
		FallbackTailChars:   3000,
		StorageSubdir:       ".tool-results",
		ExemptTools:         []string{"read_file", "read_file_tool"},
	}
}

func defaultLoopDetection() LoopDetection {
	return LoopDetection{
		Enabled:           true,
		WarnThreshold:     3,
		HardLimit:         5,
		WindowSize:        20,
		MaxTrackedThreads: 100,
		ToolFreqWarn:      30,
		ToolFreqHardLimit: 50,
	}
}

func defaultSandbox() Sandbox {
	return Sandbox{
		Use:                    LocalSandboxProvider,
		BashOutputMaxChars:     20000,
		ReadFileOutputMaxChars: 50000,
		LsOutputMaxChars:       20000,
		BashCommandTimeout:     600,
		WriteFileMaxBytes:      10 << 20,
	}
}

func defaultSkills() Skills { return Skills{Use: localSkillStorage, ContainerPath: "/mnt/skills"} }

func defaultTokenBudget() TokenBudget {
	return TokenBudget{Enabled: true, MaxTokens: 2_000_000, WarnThreshold: 0.7, HardStopThreshold: 1.0}
}

// defaultLeadTokenBudget is DeerFlow's TokenBudgetConfig default, the
// top-level token_budget section.
func defaultLeadTokenBudget() TokenBudget {
	return TokenBudget{MaxTokens: 200_000, WarnThreshold: 0.8, HardStopThreshold: 1.0}
}

func defaultSubagents() Subagents {
	return Subagents{
		TimeoutSeconds: 1800,
		MaxTotalPerRun: 6,
		MaxConcurrent:  3,
		Workers:        3,
		TokenBudget:    defaultTokenBudget(),
	}
}

func defaultCustomSubagent() CustomSubagent {
	return CustomSubagent{
		DisallowedTools: []string{"task", "ask_clarification", "present_files"},
		Model:           "inherit",
		MaxTurns:        50,
		TimeoutSeconds:  900,
	}
}

func defaultACPAgent() ACPAgent { return ACPAgent{TimeoutSeconds: 1800} }

func defaultDatabase() Database { return Database{Backend: "sqlite"} }

func defaultUploads() Uploads {
	return Uploads{MaxFiles: 10, MaxFileSize: 50 << 20, MaxTotalSize: 100 << 20, PDFConverter: "auto"}
}

// Default returns the configuration used when there is no config file: no
// models or tools, the local sandbox with host bash off, and every section
// at its default.
func Default() *Config {
	return &Config{
		ToolSearch:      defaultToolSearch(),
		ToolOutput:      defaultToolOutput(),
		ReadBeforeWrite: ReadBeforeWrite{Enabled: true},
		LoopDetection:   defaultLoopDetection(),
		ToolProgress:    defaultToolProgress(),
		Title:           defaultTitle(),
		Summarization:   defaultSummarization(),
		TokenUsage:      TokenUsage{Enabled: true},
		InputPolish:     defaultInputPolish(),
		Suggestions:     defaultSuggestions(),
		MCPTasks:        defaultMCPTasks(),
		Scheduler:       defaultScheduler(),
		TokenBudget:     defaultLeadTokenBudget(),
		Sandbox:         defaultSandbox(),
		Skills:          defaultSkills(),
		SkillScan:       SkillScan{Enabled: true},
		SkillEvolution:  SkillEvolution{SecurityFailClosed: true},
		Subagents:       defaultSubagents(),
		Database:        defaultDatabase(),
		Uploads:         defaultUploads(),
		Guardrails:      defaultGuardrails(),
		Authorization:   defaultAuthorization(),
		ToolPolicy:      defaultToolPolicy(),
		Memory:          memoryOff(),

		SafetyFinishReason: defaultSafetyFinishReason(),
		LLMCall:            defaultLLMCall(),
		CircuitBreaker:     defaultCircuitBreaker(),
	}
}

// Model returns the first model named name.
func (c *Config) Model(name string) (*Model, bool) {
	for i := range c.Models {
		if c.Models[i].Name == name {
			return &c.Models[i], true
		}
	}
	return nil, false
}

// DefaultModel returns the first configured model.
func (c *Config) DefaultModel() (*Model, bool) {
	if len(c.Models) == 0 {
		return nil, false
	}
	return &c.Models[0], true
}

// Tool returns the first tools[] entry named name.
func (c *Config) Tool(name string) (*ToolEntry, bool) {
	for i := range c.Tools {
		if c.Tools[i].Name == name {
			return &c.Tools[i], true
		}
	}
	return nil, false
}

// ToolGroup returns the first tool_groups[] entry named name.
func (c *Config) ToolGroup(name string) (*ToolGroup, bool) {
	for i := range c.ToolGroups {
		if c.ToolGroups[i].Name == name {
			return &c.ToolGroups[i], true
		}
	}
	return nil, false
}

// UsesLocalSandbox reports whether sandbox.use names DeerFlow's (or
// Antler's) local, non-isolating sandbox provider.
func (c *Config) UsesLocalSandbox() bool { return IsLocalSandboxProvider(c.Sandbox.Use) }

// IsLocalSandboxProvider reports whether use names the local sandbox
// provider (DeerFlow's sandbox/security.py).
func IsLocalSandboxProvider(use string) bool {
	switch use {
	case LocalSandboxProvider,
		"deerflow.sandbox.local.local_sandbox_provider:LocalSandboxProvider",
		"antler:local", "antler:local_sandbox":
		return true
	}
	return strings.HasSuffix(use, ":LocalSandboxProvider") && strings.Contains(use, "deerflow.sandbox.local")
}

// IsHostBashAllowed reports whether bash may run: a container provider is
// always allowed; the local provider needs sandbox.allow_host_bash. A nil
// config (no sandbox section) allows nothing.
func (c *Config) IsHostBashAllowed() bool {
	if c == nil || c.Sandbox.Use == "" {
		return false
	}
	if !c.UsesLocalSandbox() {
		return true
	}
	return c.Sandbox.AllowHostBash
}

// ACPAgentNames returns the configured ACP agent names, sorted.
func (c *Config) ACPAgentNames() []string { return slices.Sorted(maps.Keys(c.ACPAgents)) }

// AgentNames returns the names in subagents.agents (overrides), sorted.
func (s *Subagents) AgentNames() []string { return slices.Sorted(maps.Keys(s.Agents)) }

// CustomAgentNames returns the names in subagents.custom_agents, sorted.
func (s *Subagents) CustomAgentNames() []string { return slices.Sorted(maps.Keys(s.CustomAgents)) }
