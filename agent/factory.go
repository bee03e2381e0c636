package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// NoModelsMessage is DeerFlow's error for a config without models.
const NoModelsMessage = "No chat models are configured. Please configure at least one model in config.yaml."

// webhookChannels are channels whose messages come from untrusted
// commenters: update_agent is withheld there.
var webhookChannels = map[string]bool{"github": true}

// AgentSpec is what the factory needs of a custom agent.
type AgentSpec struct {
	Name        string
	Description string
	// Model is the agent's model ("" for the run's default).
	Model string
	// ToolGroups filters config tools (nil: all groups; empty: none).
	ToolGroups []string
	// Skills is the agent's skill allowlist (nil: all enabled; empty:
	// none).
	Skills []string
	// Soul is the agent's SOUL.md.
	Soul string
	// ThinkingEnabled, when non-nil, is the agent's thinking default.
	ThinkingEnabled *bool
	// Temperature and MaxTokens override the model's sampling when set.
	Temperature *float64
	MaxTokens   *int
	// MCPPlugins names the MCP servers the agent binds (nil: every one;
	// empty: none) and MCPTools narrows some to a few tools
	// (BindAgentMCP).
	MCPPlugins []string
	MCPTools   map[string][]string
}

// ErrAgentNotFound is returned (wrapped) by an AgentLoader for an unknown
// agent.
var ErrAgentNotFound = errors.New("agent not found")

// AgentLoader loads custom agents (customagent.Store via CustomAgents).
type AgentLoader interface {
	LoadAgent(ctx context.Context, userID, name string) (*AgentSpec, error)
}

// SkillsSection renders the skills section of the system prompt for a
// user; allowed is the skill allowlist (nil: every enabled skill).
type SkillsSection func(ctx context.Context, userID string, allowed []string) (string, error)

// FactoryOptions configure a Factory. Assembler is required.
type FactoryOptions struct {
	// Assembler assembles tools; its Registry and Env also build models.
	Assembler *toolset.Assembler
	// Config is the configuration; nil means Assembler.Env.Config.
	Config *config.Config
	// Agents loads custom agents; nil makes a named agent an error.
	Agents AgentLoader
	// SetupAgent is bound for bootstrap runs (the agent builder); nil
	// binds none.
	SetupAgent *tool.Tool
	// UpdateAgent is bound for a custom agent's runs, except on webhook
	// channels; nil binds none.
	UpdateAgent *tool.Tool
	// Store is handed to every agent (nil: no persistence).
	Store store.Store
	// Skills renders the skills prompt section; nil renders none.
	Skills SkillsSection
	// SubagentLimit builds the model middleware that caps task calls per
	// response (DeerFlow's subagents package); nil adds none.
	SubagentLimit func(maxConcurrent int) tool.ModelMiddleware
	// ToolMiddlewares are placed outside tool error handling (output
	// budget, result sanitisation, read-before-write, ...), first
	// outermost.
	ToolMiddlewares []tool.Middleware
	// ModelMiddlewares are placed after dangling-call repair and before
	// the deferred filter (image injection, skill policy, ...).
	ModelMiddlewares []tool.ModelMiddleware
	// MCPServers returns the current mcpServers of the extensions file,
	// for keyword routing of deferred MCP tools (DeerFlow's tool_search.py and mcp_routing_middleware.py); nil
	// means no routing.
	MCPServers func() map[string]config.MCPServer
	// MCPServerNames returns the MCP servers a user's runs see (the
	// shared ones and the user's own), against which a custom agent's
	// mcp_plugins are checked (BindAgentMCP); nil skips the check.
	MCPServerNames func(user string) []string
	// Catalogs keeps the deferred-tool catalogues (tool_search's index),
	// built once per distinct MCP tool list; pass the subagent executor
	// the same cache so that tasks reuse the lead's. nil means a cache
	// of the factory's own, of deferred.DefaultCatalogCacheSize.
	Catalogs *deferred.CatalogCache
	// MaxTurns and ToolConcurrency are passed to every agent (0: the
	// defaults).
	MaxTurns        int
	ToolConcurrency int
	// Now gives the date in the prompt; nil means time.Now.
	Now func() time.Time
	// Logger receives warnings (model fallback, skipped tools); nil
	// discards.
	Logger *slog.Logger
	// Authorizer applies the authorization section: the tools a run's
	// role may not use are not bound, and a model it may not use is
	// refused or replaced (agent/authz.go); nil authorizes everything.
	Authorizer *authz.Authorizer
	// Memory is the long-term memory (*memory.Manager): its block goes
	// into the system prompt, its tools (mode tool) are bound, and each
	// completed run is queued for extraction. nil means none.
	Memory Memory
	// RunEnded is called when each lead run ends, whatever its outcome
	// (Options.RunEnded); the CLI closes the thread's browser session
	// there. nil calls nothing.
	RunEnded func(in Input, out *Outcome, err error)
	// Telemetry records the spans and metrics of the agents' runs; nil
	// records none.
	Telemetry *telemetry.Recorder
	// LLMCalls is the process's cap on model calls in flight and its
	// circuit breakers (llm_call, circuit_breaker), to share with the
	// subagent executor; nil builds one for this factory from Config.
	LLMCalls *LLMCalls
}

// Memory is what the lead agent needs of the long-term memory.
type Memory interface {
	// Prompt returns the user's <memory> block, "" for none; query is
	// the user's message, for ranking.
	Prompt(ctx context.Context, userID, query string) (string, error)
	// Tools are the memory tools to bind (nil: none).
	Tools() []*tool.Tool
	// Enqueue queues a finished turn for extraction; it must not block.
	Enqueue(userID, threadID string, msgs []model.Message)
}

// Factory builds DeerFlow's lead agent for each run (DeerFlow's agents/lead_agent/agent.py). It is
// safe for concurrent use; its loop detector and model cache are shared by
// the agents it builds.
type Factory struct {
	opts   FactoryOptions // immutable after NewFactory
	logger *slog.Logger
	loops  *LoopDetector
	safety tool.ModelMiddleware // nil when safety_finish_reason is off
	// llmCalls is FactoryOptions.LLMCalls, or the factory's own.
	llmCalls *LLMCalls

	mu     sync.Mutex                   // guards models
	models map[modelKey]model.ChatModel // built models per config and name
}

type modelKey struct {
	cfg  *config.Config
	name string
}

// NewFactory returns a factory.
func NewFactory(opts FactoryOptions) (*Factory, error) {
	if opts.Assembler == nil {
		return nil, errors.New("agent: factory needs an assembler")
	}
	if opts.Config == nil && opts.Assembler.Env != nil {
		opts.Config = opts.Assembler.Env.Config
	}
	if opts.Config == nil {
		return nil, errors.New("agent: factory needs a configuration")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.Catalogs == nil {
		opts.Catalogs = deferred.NewCatalogCache(deferred.CatalogCacheOptions{})
	}
	f := &Factory{opts: opts, logger: logger, loops: NewLoopDetector(opts.Config.LoopDetection, logger),
		models: map[modelKey]model.ChatModel{}}
	if sf := opts.Config.SafetyFinishReason; sf.Enabled {
		detectors, err := SafetyDetectorsFromConfig(sf)
		if err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		f.safety = SafetyFinishReason(SafetyFinishReasonOptions{Detectors: detectors})
	}
	f.llmCalls = opts.LLMCalls
	if f.llmCalls == nil {
		f.llmCalls = NewLLMCalls(LLMCallsOptions{LLMCall: opts.Config.LLMCall, CircuitBreaker: opts.Config.CircuitBreaker, Logger: logger})
	}
	return f, nil
}

// Request is one run's options (DeerFlow's configurable/context keys).
type Request struct {
	ThreadID string
	UserID   string
	RunID    string
	// UserRole is the caller's authorization role, set as the runtime
	// context's user_role over any value in Context; "" means the
	// authorization section's default_role.
	UserRole string
	// AgentName names a custom agent ("" for the default agent).
	AgentName string
	// ModelName requests a model; unknown names fall back to the default.
	ModelName string
	// IsBootstrap builds the agent-builder (adds setup_agent).
	IsBootstrap bool
	// SubagentEnabled adds the task tool.
	SubagentEnabled bool
	// NonInteractive removes ask_clarification (scheduled runs).
	NonInteractive bool
	// ThinkingEnabled overrides the agent's and the default (on).
	ThinkingEnabled *bool
	// ChannelName is the channel the run came from ("github" withholds
	// update_agent).
	ChannelName string
	// MaxConcurrentSubagents is the per-response task limit; 0 means 3.
	MaxConcurrentSubagents int
	// MaxTotalSubagents is the per-run task limit; 0 means
	// subagents.max_total_per_run.
	MaxTotalSubagents int
	// NoMCP leaves MCP tools out.
	NoMCP bool
	// ToolGroups, when non-nil, filters config tools by group instead of
	// the custom agent's tool_groups (an empty list keeps none). The CLI's
	// --groups flag sets it.
	ToolGroups []string
	// Query is the user's message of the run, which ranks the memory
	// facts injected into the prompt ("" ranks by confidence).
	Query string
	// Context holds further runtime values handed to tools (for example
	// disable_clarification); the identity keys are set by the factory.
	Context map[string]any
}

// Lead is a built lead agent with what it was built from.
type Lead struct {
	Agent *Agent
	// ModelName is the resolved model.
	ModelName string
	Thinking  bool
	Tools     *toolset.Toolset
	Prompt    string
	// Spec is the custom agent (nil for the default agent and bootstrap).
	Spec *AgentSpec
	// Context is the runtime context for Input.Context.
	Context map[string]any
	// Metadata is DeerFlow's run metadata (agent_name, model_name,
	// thinking_enabled, subagent_enabled, tool_groups, available_skills).
	Metadata map[string]any
	// ToolMiddlewares and ModelMiddlewares name the chains' entries in
	// order, first outermost (Chain.ToolNames, Chain.ModelNames).
	ToolMiddlewares, ModelMiddlewares []string

	req Request
}

// Input returns the run input for this lead with the given new messages.
func (l *Lead) Input(messages ...model.Message) Input {
	return Input{ThreadID: l.req.ThreadID, UserID: l.req.UserID, AgentName: l.req.AgentName, RunID: l.req.RunID,
		Messages: messages, Context: l.Context}
}

// resolveModel picks the run's model: the requested name if configured,
// else the default (first) model with a warning for an unknown request.
func resolveModel(cfg *config.Config, requested string, logger *slog.Logger) (*config.Model, error) {
	def, ok := cfg.DefaultModel()
	if !ok {
		return nil, errors.New(NoModelsMessage) //lint:ignore ST1005 DeerFlow's message, shown to the user verbatim
	}
	if requested != "" {
		if m, ok := cfg.Model(requested); ok {
			return m, nil
		}
		if requested != def.Name && logger != nil {
			logger.Warn(fmt.Sprintf("Model '%s' not found in config; fallback to default model '%s'.", requested, def.Name))
		}
	}
	return def, nil
}

// Build builds the lead agent for one run, in the steps of the recipe in
// docs/architecture.md: the custom agent, the model, the tools (with
// deferred MCP tools), the prompt, the middleware chains (ChainSpec), the
// runtime context.
func (f *Factory) Build(ctx context.Context, req Request) (*Lead, error) {
	spec, err := f.loadSpec(ctx, req)
	if err != nil {
		return nil, err
	}
	mcfg, thinking, err := f.leadModel(req, spec)
	if err != nil {
		return nil, err
	}
	if mcfg, err = f.authorizeModel(ctx, req, mcfg); err != nil {
		return nil, err
	}
	thinking = thinking && mcfg.SupportsThinking
	chat, err := f.model(ctx, f.opts.Config, mcfg.Name)
	if err != nil {
		return nil, err
	}
	ts, def, err := f.leadTools(ctx, req, spec, mcfg.Name)
	if err != nil {
		return nil, err
	}
	prompt, err := f.leadPrompt(ctx, req, spec, ts, def)
	if err != nil {
		return nil, err
	}
	chain := f.leadChain(req, def, mcfg.Name).Build()
	opts := Options{Model: chat, Tools: ts.Tools(), ToolMiddlewares: chain.Tool, ModelMiddlewares: chain.Model,
		SystemPrompt: prompt, MaxTurns: f.opts.MaxTurns, ToolConcurrency: f.opts.ToolConcurrency,
		Thinking: thinking, Store: f.opts.Store, Logger: f.logger, Title: f.title(ctx, f.opts.Config),
		Summarization: f.Summarization(ctx, f.opts.Config, mcfg), Telemetry: f.opts.Telemetry}
	if spec != nil {
		opts.Temperature = spec.Temperature
		if spec.MaxTokens != nil {
			opts.MaxTokens = *spec.MaxTokens
		}
	}
	opts.AfterRun = f.afterRun(req)
	opts.RunEnded = f.opts.RunEnded
	a, err := New(opts)
	if err != nil {
		return nil, err
	}
	rc, meta := leadContext(req, spec, mcfg.Name, thinking)
	rc[authz.ContextUserRole] = f.userRole(req)
	f.logger.Info("lead agent built", "agent", cmp.Or(req.AgentName, "default"), "model", mcfg.Name,
		"thinking", thinking, "tools", len(ts.Entries), "subagents", req.SubagentEnabled)
	return &Lead{Agent: a, ModelName: mcfg.Name, Thinking: thinking, Tools: ts, Prompt: prompt, Spec: spec,
		Context: rc, Metadata: meta, ToolMiddlewares: chain.ToolNames, ModelMiddlewares: chain.ModelNames, req: req}, nil
}

// loadSpec checks the agent name and loads the custom agent (nil for the
// default agent and the agent builder).
func (f *Factory) loadSpec(ctx context.Context, req Request) (*AgentSpec, error) {
	if req.AgentName != "" {
		if err := customagent.ValidateName(req.AgentName); err != nil {
			return nil, err
		}
	}
	if req.AgentName == "" || req.IsBootstrap {
		return nil, nil
	}
	if f.opts.Agents == nil {
		return nil, fmt.Errorf("agent %q: %w (no custom agent store)", req.AgentName, ErrAgentNotFound)
	}
	return f.opts.Agents.LoadAgent(ctx, req.UserID, req.AgentName)
}

// leadModel resolves the run's model (the request's, else the custom
// agent's, else the default) and whether thinking is on (the request's,
// else the agent's, else on; always off for a model without thinking).
func (f *Factory) leadModel(req Request, spec *AgentSpec) (*config.Model, bool, error) {
	requested := req.ModelName
	if requested == "" && spec != nil {
		requested = spec.Model
	}
	mcfg, err := resolveModel(f.opts.Config, requested, f.logger)
	if err != nil {
		return nil, false, err
	}
	thinking := true
	switch {
	case req.ThinkingEnabled != nil:
		thinking = *req.ThinkingEnabled
	case spec != nil && spec.ThinkingEnabled != nil:
		thinking = *spec.ThinkingEnabled
	}
	return mcfg, thinking && mcfg.SupportsThinking, nil
}

// leadTools assembles the run's tools, adds setup_agent or update_agent
// by rule, removes ask_clarification from non-interactive runs, and
// defers the MCP tools behind tool_search when the config asks for it
// (def is nil otherwise).
func (f *Factory) leadTools(ctx context.Context, req Request, spec *AgentSpec, modelName string) (*toolset.Toolset, *deferred.Deferred, error) {
	cfg := f.opts.Config
	var groups []string
	if spec != nil {
		groups = spec.ToolGroups
	}
	if req.ToolGroups != nil {
		groups = req.ToolGroups
	}
	ts, err := f.opts.Assembler.Assemble(ctx, toolset.Options{Config: cfg, Groups: groups, IncludeMCP: !req.NoMCP,
		User: req.UserID, ModelName: modelName, SubagentEnabled: req.SubagentEnabled})
	if err != nil {
		return nil, nil, err
	}
	if spec != nil && (spec.MCPPlugins != nil || spec.MCPTools != nil) {
		var known []string
		if f.opts.MCPServerNames != nil {
			known = f.opts.MCPServerNames(req.UserID)
		}
		ts.Entries = BindAgentMCP(ts.Entries, spec, known, f.logger)
	}
	switch {
	case req.IsBootstrap:
		f.addExtra(ts, f.opts.SetupAgent, builtin.SetupAgentName)
	case req.AgentName != "" && !webhookChannels[req.ChannelName]:
		f.addExtra(ts, f.opts.UpdateAgent, builtin.UpdateAgentName)
	}
	if req.NonInteractive {
		ts.Remove(builtin.AskClarificationName)
	}
	if f.opts.Memory != nil && !req.IsBootstrap {
		if skipped := ts.Add(toolset.SourceBuiltin, "memory", f.opts.Memory.Tools()...); len(skipped) > 0 {
			f.logger.Warn("memory tools not added: a tool with that name is already bound", "tools", skipped)
		}
	}
	ts.Entries = FilterEntries(ctx, f.opts.Authorizer, f.identity(req), ts.Entries)
	var servers map[string]config.MCPServer
	if cfg.ToolSearch.Enabled && f.opts.MCPServers != nil {
		servers = f.opts.MCPServers()
	}
	window := 0
	if m, ok := cfg.Model(modelName); ok {
		window = m.ContextWindow()
	}
	chat, _ := f.model(ctx, cfg, modelName) // built by Build already; nil only without a model
	def, err := DeferTools(ts.Entries, DeferOptions{Catalogs: f.opts.Catalogs, Config: cfg.ToolSearch, Servers: servers,
		ContextWindow: window, Model: chat})
	if err != nil || def == nil {
		return ts, nil, err
	}
	for i := range ts.Entries {
		ts.Entries[i].Deferred = def.Catalog.Has(ts.Entries[i].Tool.Name)
	}
	if def.ToolSearch == nil {
		return ts, def, nil // the provider searches
	}
	if skipped := ts.Add(toolset.SourceBuiltin, "builtin", def.ToolSearch); len(skipped) > 0 {
		f.logger.Warn("tool_search not added: a tool with that name is already bound")
	}
	return ts, def, nil
}

// allowedSkills is the run's skill allowlist: the agent builder's
// bootstrap skill, else the custom agent's list (nil: every enabled
// skill).
func allowedSkills(req Request, spec *AgentSpec) []string {
	switch {
	case req.IsBootstrap:
		return []string{"bootstrap"}
	case spec != nil && spec.Skills != nil:
		return slices.Clone(spec.Skills)
	}
	return nil
}

// maxConcurrent is the per-response task limit of a run.
func (f *Factory) maxConcurrent(req Request) int {
	return cmp.Or(req.MaxConcurrentSubagents, f.opts.Config.Subagents.MaxConcurrent, 3)
}

// leadPrompt renders the lead agent's system prompt for the bound tools.
func (f *Factory) leadPrompt(ctx context.Context, req Request, spec *AgentSpec, ts *toolset.Toolset, def *deferred.Deferred) (string, error) {
	skills := ""
	if f.opts.Skills != nil {
		var err error
		if skills, err = f.opts.Skills(ctx, req.UserID, allowedSkills(req, spec)); err != nil {
			return "", fmt.Errorf("agent: skills prompt: %w", err)
		}
	}
	_, hasTask := ts.Lookup(builtin.TaskName)
	_, hasClar := ts.Lookup(builtin.AskClarificationName)
	_, hasPresent := ts.Lookup(builtin.PresentFilesName)
	pd := PromptData{
		AgentName: req.AgentName, Date: f.now().Format("2006-01-02, Monday"), Bootstrap: req.IsBootstrap,
		PresentFiles: hasPresent, Clarification: hasClar,
		Subagents: req.SubagentEnabled && hasTask, MaxConcurrentSubagents: f.maxConcurrent(req),
		MaxTotalSubagents: cmp.Or(req.MaxTotalSubagents, f.opts.Config.Subagents.MaxTotalPerRun),
		Skills:            skills,
	}
	if spec != nil {
		pd.Soul = strings.TrimSpace(spec.Soul)
	}
	if def != nil {
		pd.Deferred = strings.TrimSpace(def.Prompt + "\n\n" + def.RoutingPrompt)
	}
	if f.opts.Memory != nil && !req.IsBootstrap {
		mem, err := f.opts.Memory.Prompt(ctx, req.UserID, req.Query)
		if err != nil {
			// DeerFlow fails open: a memory that cannot be read leaves
			// the prompt without it.
			f.logger.Warn("memory not injected: cannot read it", "user", req.UserID, "err", err)
		}
		_, pd.MemoryTools = ts.Lookup("memory_search")
		pd.Memory = mem
	}
	return RenderPrompt(pd), nil
}

// leadChain says which middlewares the lead agent's chains hold.
func (f *Factory) leadChain(req Request, def *deferred.Deferred, modelName string) ChainSpec {
	spec := ChainSpec{ToolMiddlewares: f.opts.ToolMiddlewares, ModelMiddlewares: f.opts.ModelMiddlewares,
		Deferred: def, Clarification: true, TerminalResponse: true, ModelLength: true,
		LLMErrorHandling: LLMErrorHandling(LLMErrorHandlingOptions{Calls: f.llmCalls, ModelName: modelName})}
	if req.SubagentEnabled && f.opts.SubagentLimit != nil {
		spec.SubagentLimit = f.opts.SubagentLimit(f.maxConcurrent(req))
	}
	if f.opts.Config.LoopDetection.Enabled {
		spec.LoopDetection = f.loops.Middleware()
	}
	if tb := f.opts.Config.TokenBudget; tb.Enabled {
		// A budget per built agent: it counts this run alone.
		spec.TokenBudget = NewTokenBudget(tb).Middleware()
	}
	spec.SafetyFinishReason = f.safety
	return spec
}

// leadContext returns the lead run's runtime context and DeerFlow's run
// metadata.
func leadContext(req Request, spec *AgentSpec, modelName string, thinking bool) (rc, meta map[string]any) {
	var toolGroups, skillsMeta any
	if spec != nil && spec.ToolGroups != nil {
		toolGroups = slices.Clone(spec.ToolGroups)
	}
	if allowed := allowedSkills(req, spec); allowed != nil {
		slices.Sort(allowed)
		skillsMeta = allowed
	}
	// The task tool passes the tool groups and skills on to subagents.
	rc = RuntimeContext{ThreadID: req.ThreadID, UserID: req.UserID, RunID: req.RunID, ModelName: modelName,
		SubagentEnabled: req.SubagentEnabled, ToolGroups: toolGroups, AvailableSkills: skillsMeta}.Map(req.Context)
	rc["agent_name"], rc["is_bootstrap"], rc["non_interactive"] = req.AgentName, req.IsBootstrap, req.NonInteractive
	rc["thinking_enabled"] = thinking
	if req.ChannelName != "" {
		rc["channel_name"] = req.ChannelName
	}
	if req.MaxTotalSubagents != 0 {
		rc[builtin.ContextMaxTotalSubagents] = req.MaxTotalSubagents
	}
	meta = map[string]any{
		"agent_name": cmp.Or(req.AgentName, "default"), "model_name": modelName, "thinking_enabled": thinking,
		"is_plan_mode": false, "subagent_enabled": req.SubagentEnabled, "tool_groups": toolGroups,
		"available_skills": skillsMeta,
	}
	setMCPContext(rc, meta, spec)
	return rc, meta
}

// afterRun queues a completed run's conversation for memory extraction
// (nil without memory, and for the agent builder).
func (f *Factory) afterRun(req Request) func(Input, *Outcome) {
	if f.opts.Memory == nil || req.IsBootstrap {
		return nil
	}
	mem := f.opts.Memory
	return func(in Input, out *Outcome) {
		mem.Enqueue(in.UserID, out.ThreadID, out.State.Messages)
	}
}

func (f *Factory) now() time.Time {
	if f.opts.Now != nil {
		return f.opts.Now()
	}
	return time.Now()
}

// title returns the title options of the config's title section, nil
// when it is disabled. A title model that cannot be built is logged and
// left out, so titles fall back to the user's message, as DeerFlow falls
// back when its title model fails.
func (f *Factory) title(ctx context.Context, cfg *config.Config) *TitleOptions {
	tc := cfg.Title
	if !tc.Enabled {
		return nil
	}
	o := &TitleOptions{MaxWords: tc.MaxWords, MaxChars: tc.MaxChars, PromptTemplate: tc.PromptTemplate}
	if tc.ModelName != "" {
		m, err := f.model(ctx, cfg, tc.ModelName)
		if err != nil {
			f.logger.Warn("cannot build the title model; titles use the fallback", "model", tc.ModelName, "err", err)
		}
		o.Model = m
	}
	return o
}

// Summarization returns the options of the config's summarization section
// for a run on the model runModel, nil when it is disabled: model_name's
// model writes summaries (the run's model when it is null, or cannot be
// built, or fails), and runModel's context_window sizes fraction
// thresholds.
func (f *Factory) Summarization(ctx context.Context, cfg *config.Config, runModel *config.Model) *SummarizationOptions {
	sc := cfg.Summarization
	if !sc.Enabled {
		return nil
	}
	var summary model.ChatModel
	if sc.ModelName != "" && (runModel == nil || sc.ModelName != runModel.Name) {
		m, err := f.model(ctx, cfg, sc.ModelName)
		if err != nil {
			f.logger.Warn("cannot build the summary model; summaries use the run's model", "model", sc.ModelName, "err", err)
		}
		summary = m
	}
	window := 0
	if runModel != nil {
		window = runModel.ContextWindow()
	}
	return SummarizationFromConfig(sc, summary, window)
}

// Compact summarises a stored thread's older messages now (POST
// /api/threads/{id}/compact): the run model is resolved as for a run
// (req.ModelName, then the custom agent's model, then the default), and
// the result is saved as the thread's next checkpoint. See Agent.Compact.
func (f *Factory) Compact(ctx context.Context, req Request, force bool) (*CompactResult, error) {
	cfg := f.opts.Config
	if !cfg.Summarization.Enabled {
		return nil, ErrCompactionDisabled
	}
	requested := req.ModelName
	if requested == "" && req.AgentName != "" && f.opts.Agents != nil {
		if spec, err := f.opts.Agents.LoadAgent(ctx, req.UserID, req.AgentName); err == nil {
			requested = spec.Model
		}
	}
	mcfg, err := resolveModel(cfg, requested, f.logger)
	if err != nil {
		return nil, err
	}
	if mcfg, err = f.authorizeModel(ctx, req, mcfg); err != nil {
		return nil, err
	}
	chat, err := f.model(ctx, cfg, mcfg.Name)
	if err != nil {
		return nil, err
	}
	a, err := New(Options{Model: chat, Store: f.opts.Store, Logger: f.logger, Summarization: f.Summarization(ctx, cfg, mcfg), Telemetry: f.opts.Telemetry})
	if err != nil {
		return nil, err
	}
	return a.Compact(ctx, req.ThreadID, force)
}

// addExtra binds one of the factory's extra built-ins (setup_agent,
// update_agent), if it was given.
func (f *Factory) addExtra(ts *toolset.Toolset, t *tool.Tool, name string) {
	if t == nil {
		f.logger.Debug("extra built-in not available", "tool", name)
		return
	}
	if skipped := ts.Add(toolset.SourceBuiltin, "builtin", t); len(skipped) > 0 {
		f.logger.Warn("duplicate tool name: keeping the assembled tool", "tool", name)
	}
}

// model returns the chat model of a models[] entry, built once per
// configuration and named after the entry (NamedModel).
func (f *Factory) model(ctx context.Context, cfg *config.Config, name string) (model.ChatModel, error) {
	key := modelKey{cfg, name}
	f.mu.Lock()
	m, ok := f.models[key]
	f.mu.Unlock()
	if ok {
		return m, nil
	}
	idx := slices.IndexFunc(cfg.Models, func(m config.Model) bool { return m.Name == name })
	if idx < 0 {
		return nil, fmt.Errorf("agent: model %q is not configured", name)
	}
	env := f.opts.Assembler.Env
	if env == nil {
		env = &toolset.Env{Config: cfg, Logger: f.logger}
	}
	m, err := f.opts.Assembler.Registry.BuildModel(ctx, env, cfg.Models[idx], idx)
	if err != nil {
		return nil, err
	}
	m = NamedModel(name, m) // runs record its usage under its name
	f.mu.Lock()
	if prev, ok := f.models[key]; ok {
		m = prev
	} else {
		f.models[key] = m
	}
	f.mu.Unlock()
	return m, nil
}
