package config

import (
	"maps"
	"slices"
	"strings"
)

// validate checks required keys and ranges after decoding, and applies the
// clamps DeerFlow applies. Errors name the key path and its line.
func (p *parser) validate() {
	c := p.cfg
	for i, m := range c.Models {
		at := indexKey("models", i)
		p.required(at, "name", m.Name)
		p.required(at, "use", m.Use)
		p.required(at, "model", m.Model)
	}
	for i, g := range c.ToolGroups {
		p.required(indexKey("tool_groups", i), "name", g.Name)
	}
	for i, t := range c.Tools {
		at := indexKey("tools", i)
		p.required(at, "name", t.Name)
		p.required(at, "group", t.Group)
		p.required(at, "use", t.Use)
	}

	p.validateToolSearch()

	p.validateToolOutput()
	p.validateLoopDetection()
	p.validateToolProgress()
	p.validateSafetyFinishReason()
	p.validateLLMCall()
	p.validateTitle()
	p.validateSummarization()
	p.validateSandbox()
	p.validateGuardrails()
	p.validateAuthorization()
	p.validateToolPolicy()
	p.validateMemory()
	p.validateTracing()
	p.validateInputPolish()
	p.validateSuggestions()
	p.validateMCPTasks()
	p.validateScheduler()

	if cp := c.Skills.ContainerPath; !strings.HasPrefix(cp, "/") {
		p.invalid("skills.container_path", "must be an absolute path, got %q", cp)
	}
	if c.Skills.Use == "" {
		c.Skills.Use = localSkillStorage
	}

	p.validateSubagents()
	p.validateTokenBudget("token_budget", c.TokenBudget)

	for _, name := range c.ACPAgentNames() {
		a := c.ACPAgents[name]
		at := joinKey("acp_agents", name)
		p.required(at, "command", a.Command)
		p.required(at, "description", a.Description)
		atLeast(p, joinKey(at, "timeout_seconds"), a.TimeoutSeconds, 1)
	}

	db := &c.Database
	if db.Backend == "" {
		db.Backend = "sqlite"
	}
	switch db.Backend {
	case "sqlite":
	case "postgres":
		p.required("database", "postgres_url", db.PostgresURL)
	default:
		p.invalid("database.backend", "unsupported backend %q (supported: sqlite, postgres)", db.Backend)
	}
	atLeast(p, "database.checkpoint_retention.keep_latest", db.CheckpointRetention.KeepLatest, -1)

	atLeast(p, "gateway.elicitation_timeout_seconds", c.Gateway.ElicitationTimeoutSeconds, 0)

	u := c.Uploads
	atLeast(p, "uploads.max_files", u.MaxFiles, 1)
	atLeast(p, "uploads.max_file_size", u.MaxFileSize, 1)
	atLeast(p, "uploads.max_total_size", u.MaxTotalSize, 1)
}

func (p *parser) validateToolOutput() {
	to := p.cfg.ToolOutput
	for _, f := range []intKey{
		{"externalize_min_chars", to.ExternalizeMinChars},
		{"preview_head_chars", to.PreviewHeadChars},
		{"preview_tail_chars", to.PreviewTailChars},
		{"fallback_max_chars", to.FallbackMaxChars},
		{"fallback_head_chars", to.FallbackHeadChars},
		{"fallback_tail_chars", to.FallbackTailChars},
	} {
		atLeast(p, joinKey("tool_output", f.key), f.v, 0)
	}
	if s := to.StorageSubdir; s == "" || s == "." || s == ".." || strings.ContainsAny(s, `/\`) {
		p.invalid("tool_output.storage_subdir", "must be a single path segment, got %q", s)
	}
	for _, name := range sortedKeys(to.ToolOverrides) {
		atLeast(p, joinKey("tool_output.tool_overrides", name), to.ToolOverrides[name], 0)
	}
}

func (p *parser) validateLoopDetection() {
	ld := p.cfg.LoopDetection
	for _, f := range []intKey{
		{"warn_threshold", ld.WarnThreshold},
		{"hard_limit", ld.HardLimit},
		{"window_size", ld.WindowSize},
		{"max_tracked_threads", ld.MaxTrackedThreads},
		{"tool_freq_warn", ld.ToolFreqWarn},
		{"tool_freq_hard_limit", ld.ToolFreqHardLimit},
	} {
		atLeast(p, joinKey("loop_detection", f.key), f.v, 1)
	}
	for _, name := range sortedKeys(ld.ToolFreqOverrides) {
		o := ld.ToolFreqOverrides[name]
		at := joinKey("loop_detection.tool_freq_overrides", name)
		atLeast(p, joinKey(at, "warn"), o.Warn, 1)
		atLeast(p, joinKey(at, "hard_limit"), o.HardLimit, 1)
	}
}

func (p *parser) validateSandbox() {
	sb := &p.cfg.Sandbox
	if sb.Use == "" {
		sb.Use = LocalSandboxProvider
	}
	atLeast(p, "sandbox.bash_output_max_chars", sb.BashOutputMaxChars, 0)
	atLeast(p, "sandbox.read_file_output_max_chars", sb.ReadFileOutputMaxChars, 0)
	atLeast(p, "sandbox.ls_output_max_chars", sb.LsOutputMaxChars, 0)
	atLeast(p, "sandbox.bash_command_timeout", sb.BashCommandTimeout, 1)
	atLeast(p, "sandbox.write_file_max_bytes", sb.WriteFileMaxBytes, 1)
	for i, m := range sb.Mounts {
		at := indexKey("sandbox.mounts", i)
		p.required(at, "host_path", m.HostPath)
		if !strings.HasPrefix(m.ContainerPath, "/") {
			p.invalid(joinKey(at, "container_path"), "must be an absolute path, got %q", m.ContainerPath)
		}
	}
}

func (p *parser) validateSubagents() {
	s := &p.cfg.Subagents
	atLeast(p, "subagents.timeout_seconds", s.TimeoutSeconds, 1)
	atLeast(p, "subagents.max_turns", s.MaxTurns, 0)
	// DeerFlow caps max_total_per_run at 50 and max_concurrent at 4;
	// Antler lets the operator raise both for batch workloads (the task
	// limit middleware keeps DeerFlow's ranges for per-run requests).
	atLeast(p, "subagents.max_total_per_run", s.MaxTotalPerRun, 1)
	s.MaxConcurrent = max(s.MaxConcurrent, 1)
	atLeast(p, "subagents.workers", s.Workers, 1)
	p.validateTokenBudget("subagents.token_budget", s.TokenBudget)
	for _, name := range s.AgentNames() {
		o := s.Agents[name]
		at := joinKey("subagents.agents", name)
		if o.TimeoutSeconds != nil {
			atLeast(p, joinKey(at, "timeout_seconds"), *o.TimeoutSeconds, 1)
		}
		if o.MaxTurns != nil {
			atLeast(p, joinKey(at, "max_turns"), *o.MaxTurns, 1)
		}
	}
	for _, name := range s.CustomAgentNames() {
		a := s.CustomAgents[name]
		at := joinKey("subagents.custom_agents", name)
		p.required(at, "description", a.Description)
		p.required(at, "system_prompt", a.SystemPrompt)
		atLeast(p, joinKey(at, "max_turns"), a.MaxTurns, 1)
		atLeast(p, joinKey(at, "timeout_seconds"), a.TimeoutSeconds, 1)
		if a.Model == "" {
			a.Model = "inherit"
			s.CustomAgents[name] = a
		}
	}
}

func (p *parser) validateTokenBudget(at string, tb TokenBudget) {
	// DeerFlow's TokenBudgetConfig: max_tokens >= 1000, both thresholds
	// in 0..1, hard stop >= warning; the optional limits are >= 1 or
	// null, which Antler also spells 0.
	atLeast(p, joinKey(at, "max_tokens"), tb.MaxTokens, 1000)
	atLeast(p, joinKey(at, "max_input_tokens"), tb.MaxInputTokens, 0)
	atLeast(p, joinKey(at, "max_output_tokens"), tb.MaxOutputTokens, 0)
	warn, hard := tb.WarnThreshold, tb.HardStopThreshold
	if warn < 0 || warn > 1 {
		p.invalid(joinKey(at, "warn_threshold"), "must be between 0 and 1, got %v", warn)
	}
	if hard < 0 || hard > 1 {
		p.invalid(joinKey(at, "hard_stop_threshold"), "must be between 0 and 1, got %v", hard)
	} else if hard < warn {
		p.invalid(joinKey(at, "hard_stop_threshold"), "must be >= warn_threshold (%v), got %v", warn, hard)
	}
}

// required reports a missing or empty string key of the entry at path.
func (p *parser) required(at, key, value string) {
	if value != "" {
		return
	}
	path := joinKey(at, key)
	if _, present := p.keyLine[path]; present {
		p.invalid(path, "must not be empty")
		return
	}
	p.errorf(p.line(at), path, "is required")
}

// atLeast reports a number below lo.
func atLeast[T int | int64](p *parser, path string, v, lo T) {
	if v < lo {
		p.invalid(path, "must be at least %d, got %d", lo, v)
	}
}

// sortedKeys returns the keys of m in order, for deterministic errors.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// intKey is a key and its value, for checking several fields in order.
type intKey struct {
	key string
	v   int
}
