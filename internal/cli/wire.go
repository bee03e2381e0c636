package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"

	"github.com/antlerhq/antler/acptools"
	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/community/browser"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/guardrails"
	"github.com/antlerhq/antler/mcptasks"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/memory"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/sandbox"
	"github.com/antlerhq/antler/skills"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/subagent"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolpolicy"
	"github.com/antlerhq/antler/toolset"
	"github.com/antlerhq/antler/vpath"
)

// services are the long-lived parts of an app, built once per process by
// wire and closed by app.Close.
type services struct {
	layout     *vpath.Layout
	sandbox    *sandbox.LocalProvider
	extensions *config.ExtensionsCache // nil without an extensions file
	mcp        *mcptools.Manager
	acp        *acptools.Invoker
	skills     *skills.Store
	agents     *customagent.Store
	builtins   toolset.Builtins // the lead's: with task
	store      store.Store      // opened on first use by openStore
	policy     *skills.Policy
	subagents  *subagent.Executor
	// userMCP holds the users' own MCP servers and credentials
	// (mcp_user.go), read by the runs' MCP tools and the gateway.
	userMCP *config.UserMCPFiles
	// elicit answers the MCP servers' elicitation requests: chat's human
	// while a turn runs, else a decline (elicit.go).
	elicit *elicitor
	// catalogs keeps tool_search's catalogues, one index per distinct
	// MCP tool list, for the lead agent and subagents alike.
	catalogs *deferred.CatalogCache
	// llmCalls is the process's cap on model calls in flight and its
	// circuit breakers, shared by the lead agents and subagents.
	llmCalls *agent.LLMCalls
	// hybrid is tool_search.embeddings' hybrid search (nil: off).
	hybrid *deferred.Hybrid
	// toolPolicy decides tool calls before they run (nil: every call
	// runs); approveAll makes its asks allow (run --approve-all).
	toolPolicy toolpolicy.Decider
	approveAll bool
	// setupAgent and updateAgent are the built-ins the lead-agent factory
	// adds by rule.
	setupAgent, updateAgent *tool.Tool
	// mcpProgress shows MCP discovery on a terminal.
	mcpProgress *mcpProgress
	// authz applies the authorization section (wire_authz.go).
	authz *authz.Authorizer
	// guard applies the guardrails section; nil when it is disabled.
	guard *guardrails.Guard
	// toolProgress is the tool_progress section's guard, shared by every
	// run (wire_tool_progress.go); nil when the section is disabled.
	toolProgress *agent.ToolProgressGuard
	// mcpTasks is the MCP background-task runtime (wire_mcptasks.go);
	// nil when the mcp_tasks section is off.
	mcpTasks *mcptasks.Runtime
	// memory is the long-term memory (wire_memory.go); nil when the
	// memory section is off.
	memory *memory.Manager
	// browsers keeps the browser tools' per-thread sessions
	// (wire_browser.go).
	browsers *browser.Manager
	// telemetryServices are the traces and metrics (wire_telemetry.go).
	telemetryServices
}

// wire builds the services of the app from its configuration: the
// factories' environment, the sandbox, the built-in tools and the tool
// sources. It is the one place where the CLI connects Antler's packages.
func (a *app) wire(ctx context.Context) error {
	home := a.homeDir()
	// Telemetry first: the others get the logger with trace ids, and its
	// flush is the last closer.
	if err := a.wireTelemetry(ctx); err != nil {
		return err
	}
	if err := a.wireAuthz(); err != nil {
		return err
	}
	a.wireBrowser()
	if err := a.wireSandbox(home); err != nil {
		return err
	}
	if err := a.wireMemory(ctx, home); err != nil {
		return err
	}
	guard, err := guardrails.FromConfig(a.cfg, a.g.opts.Guardrails, a.logger)
	if err != nil {
		return err
	}
	a.guard = guard
	if err := a.openExtensions(); err != nil {
		return err
	}
	if err := a.wireToolSources(home); err != nil {
		return err
	}
	a.skills = skills.NewStore(skills.OptionsFromConfig(a.cfg, home, a.g.opts.Getenv, a.skillEnableState, a.logger))
	a.agents = customagent.New(a.layout, customagent.Options{Logger: a.logger})
	a.wireBuiltins(ctx)
	if err := a.wireMCPTasks(); err != nil {
		return err
	}
	a.policy = skills.NewPolicy(skills.PolicyOptions{Store: a.skills, Logger: a.logger})
	a.wireToolProgress()
	if err := a.wireToolPolicy(); err != nil {
		return err
	}
	if err := a.wireSubagents(); err != nil {
		return err
	}
	a.setupAgent = builtin.NewSetupAgent(a.agents, a.logger)
	a.updateAgent = builtin.NewUpdateAgent(builtin.UpdateAgentOptions{Store: a.agents, Config: a.cfg, Logger: a.logger,
		MCPServerNames: a.mcpServerNames})
	return nil
}

// wireSandbox builds the path layout under home, the local sandbox on it
// and the factories' environment; a sandbox provider other than the local
// one is a config error.
func (a *app) wireSandbox(home string) error {
	layout, err := vpath.FromConfig(home, a.cfg, a.g.opts.Getenv)
	if err != nil {
		return &config.Error{File: a.cfg.Path, Key: "sandbox", Msg: err.Error(), Err: err}
	}
	if use := a.cfg.Sandbox.Use; use != "" && !config.IsLocalSandboxProvider(use) {
		return &config.Error{File: a.cfg.Path, Key: "sandbox.use",
			Msg: fmt.Sprintf("%q is not supported: Antler implements only %s", use, config.LocalSandboxProvider)}
	}
	// One layout for every service, so that the sandbox tools, the
	// built-ins, ACP and skills agree on every path.
	a.layout, a.sandbox = layout, sandbox.NewLocal(layout, sandbox.LocalOptions{Logger: a.logger})
	a.env = &toolset.Env{Config: a.cfg, Home: home, Logger: a.logger, Sandbox: a.sandbox, Browser: a.browsers}
	return nil
}

// openExtensions opens the cache of the extensions file, if there is one,
// and reads it once: a file that does not parse or has gone is an error.
func (a *app) openExtensions() error {
	if a.paths.Extensions == "" {
		return nil
	}
	a.extensions = config.NewExtensionsCache(a.paths.Extensions)
	if _, _, err := a.extensions.Get(); err != nil {
		var ce *config.Error
		if errors.As(err, &ce) || !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return &config.Error{File: a.paths.Extensions, Msg: "file not found"}
	}
	return nil
}

// wireToolSources builds the MCP manager (closed with the app), with its
// progress line, and the ACP invoker.
func (a *app) wireToolSources(home string) error {
	a.mcpProgress = newMCPProgress(newStatusLine(a.stderr, a.g.opts.Getenv))
	// The layout puts a thread's stdio servers in its workspace and makes
	// the paths in their results virtual (run, chat and serve alike).
	a.elicit = &elicitor{logger: a.logger}
	a.userMCP = &config.UserMCPFiles{Dir: a.layout.UserDir}
	a.mcp = mcptools.New(mcptools.Options{Extensions: a.extensionsSource(), Logger: a.logger, UserFiles: a.userMCP,
		OnStatus: a.mcpProgress.update, TracerProvider: a.telemetry.TracerProvider(),
		Layout: a.layout, ElicitationHandler: a.elicit.handle,
		// http servers that ask for authorization get each run's user's
		// stored login (mcp_login.go); discovery uses --user's.
		Authorizer: storedAuthorizer(home, a.logger), AuthUser: a.g.user})
	a.onClose(a.mcp.Close)
	a.observeMCP()

	var err error
	a.acp, err = acptools.New(acptools.Options{Layout: a.layout, Home: home, Logger: a.logger,
		Extensions: func() (*config.Extensions, error) {
			ext, _, err := a.extensionsSource().Get()
			return ext, err
		}})
	return err
}

// wireBuiltins builds the built-in tools every assembler binds, with
// skill_manage when skill evolution is enabled (task joins them in
// wireSubagents).
func (a *app) wireBuiltins(ctx context.Context) {
	a.builtins = toolset.Builtins{
		PresentFiles:     builtin.NewPresentFiles(a.layout),
		AskClarification: builtin.AskClarification(),
		ViewImage:        builtin.NewViewImage(a.layout),
		ReviewSkillPackage: builtin.NewReviewSkillPackage(builtin.ReviewSkillPackageOptions{
			Layout: a.layout, Skills: a.skills, Neutralize: agent.NeutralizeUntrustedTags}),
	}
	if a.cfg.Skills.DeferredDiscovery {
		a.builtins.DescribeSkill = builtin.NewDescribeSkill(builtin.DescribeSkillOptions{
			Load: a.skills.Load, ContainerPath: a.cfg.Skills.ContainerPath})
	}
	if a.cfg.SkillEvolution.Enabled {
		a.builtins.SkillManage = builtin.NewSkillManage(builtin.SkillManageOptions{
			Store:              a.skills,
			Model:              a.moderationModel(ctx),
			SecurityFailOpen:   !a.cfg.SkillEvolution.SecurityFailClosed,
			StaticScanDisabled: !a.cfg.SkillScan.Enabled,
			Logger:             a.logger,
		})
	}
}

// wireSubagents builds the subagent executor (closed with the app), the
// task tool delegating to it and the lead's assembler.
func (a *app) wireSubagents() error {
	// Subagents assemble their tools with the built-ins as they are now,
	// without task (no recursion) and list_uploaded_files (as DeerFlow's);
	// both then join the built-ins of the lead's assembler. Each assembler
	// gets its own copy of the built-ins and never sees them change.
	mcp := mcpSourceWithProgress{a.mcp, a.mcpProgress}
	a.catalogs = deferred.NewCatalogCache(deferred.CatalogCacheOptions{Hybrid: a.toolSearchHybrid()})
	a.llmCalls = agent.NewLLMCalls(agent.LLMCallsOptions{LLMCall: a.cfg.LLMCall, CircuitBreaker: a.cfg.CircuitBreaker, Logger: a.logger})
	var err error
	a.subagents, err = subagent.New(subagent.Options{
		LLMCalls:         a.llmCalls,
		Assembler:        a.newAssembler(mcp),
		Config:           a.cfg,
		Skills:           a.skillsSection,
		ToolMiddlewares:  a.toolMiddlewares(),
		ModelMiddlewares: a.modelMiddlewares(),
		MCPServers:       a.mcpServers,
		Catalogs:         a.catalogs,
		Logger:           a.logger,
		Authorizer:       a.authz,
		Telemetry:        a.telemetry,
	})
	if err != nil {
		return err
	}
	a.onClose(func() error { a.subagents.Close(); return nil })
	a.builtins.Task = builtin.NewTask(a.subagents)
	a.builtins.ListUploadedFiles = builtin.NewListUploadedFiles(a.layout, agent.NeutralizeUntrustedTags)
	a.assembler = a.newAssembler(mcp)
	return nil
}

// newAssembler returns an assembler of the app's tools with the MCP
// source mcp (nil: none). The app's own is a.assembler; others serve
// commands that need only some MCP servers (tools call).
func (a *app) newAssembler(mcp toolset.MCPSource) *toolset.Assembler {
	return &toolset.Assembler{
		Registry: a.g.opts.Registry,
		Env:      a.env,
		Builtins: a.builtins,
		MCP:      a.withTaskToolsets(mcp),
		ACP:      a.acp.Tool,
		Logger:   a.logger,

		SkipBrokenTools: a.g.skipBrokenTools,
	}
}

// extensionsSource is the extensions file (re-read cheaply on every use),
// or no servers and skills at all without one.
func (a *app) extensionsSource() mcptools.ExtensionsSource {
	if a.extensions == nil {
		return mcptools.Static(&config.Extensions{})
	}
	return a.extensions
}

// skillEnableState reads the skills map of the extensions file.
func (a *app) skillEnableState(context.Context) (map[string]bool, error) {
	ext, _, err := a.extensionsSource().Get()
	if ext == nil {
		return nil, err
	}
	out := make(map[string]bool, len(ext.Skills))
	for name, s := range maps.All(ext.Skills) {
		out[name] = s.Enabled
	}
	return out, err
}

// moderationModel builds skill_evolution's moderation model (or the
// default model); nil when none can be built, which fails the LLM scan
// closed.
func (a *app) moderationModel(ctx context.Context) model.ChatModel {
	name := a.cfg.SkillEvolution.ModerationModelName
	for i, m := range a.cfg.Models {
		if name != "" && m.Name != name {
			continue
		}
		cm, err := a.g.opts.Registry.BuildModel(ctx, a.env, m, i)
		if err != nil {
			a.logger.Warn("moderation model unavailable; skill writes fail closed", "model", m.Name, "err", err)
			return nil
		}
		return cm
	}
	if name != "" {
		a.logger.Warn(fmt.Sprintf("skill_evolution.moderation_model_name %q is not a configured model", name))
	}
	return nil
}

// mcpSourceWithProgress clears the MCP progress line once the tools are
// known.
type mcpSourceWithProgress struct {
	m *mcptools.Manager
	p *mcpProgress
}

func (s mcpSourceWithProgress) Tools(ctx context.Context) ([]*tool.Tool, error) {
	defer s.p.done()
	return s.m.Tools(ctx)
}

// mcpSubset is the MCP source of some servers only (Manager.ToolsOf): the
// others are neither started nor waited for.
type mcpSubset struct {
	m       *mcptools.Manager
	p       *mcpProgress
	servers []string
}

func (s mcpSubset) Tools(ctx context.Context) ([]*tool.Tool, error) {
	if len(s.servers) == 0 {
		return nil, nil
	}
	defer s.p.done()
	return s.m.ToolsOf(ctx, s.servers)
}
