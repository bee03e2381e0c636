package cli

import (
	"context"
	"fmt"
	"slices"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/skills"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/subagent"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// openStore opens the thread store (SQLite under the home directory, or
// database.sqlite_dir; Postgres with database.backend: postgres) once per
// app.
func (a *app) openStore() (store.Store, error) {
	if a.store != nil {
		return a.store, nil
	}
	if a.cfg.Database.Backend == "postgres" {
		return a.openPostgres()
	}
	dir := a.cfg.Database.SqliteDir
	if dir == "" {
		dir = a.homeDir()
	}
	st, err := sqlite.OpenDir(dir, sqlite.Options{Logger: a.logger,
		Retention: store.Retention{KeepLatest: a.cfg.Database.CheckpointRetention.KeepLatest}})
	if err != nil {
		return nil, fmt.Errorf("open thread store in %s: %w", dir, err)
	}
	a.store = st
	a.onClose(st.Close)
	return st, nil
}

// newFactory returns the lead-agent factory with every service wired:
// custom agents, setup_agent/update_agent, the skills prompt section and
// tool policy, image injection, and the store (nil: no persistence).
func (a *app) newFactory(st store.Store) (*agent.Factory, error) {
	return agent.NewFactory(a.factoryOptions(st))
}

// factoryOptions are the lead-agent factory's options with every service
// wired; run, chat, the tools commands and the gateway share them.
func (a *app) factoryOptions(st store.Store) agent.FactoryOptions {
	return agent.FactoryOptions{
		Assembler:        a.assembler,
		MCPServerNames:   a.mcpServerNames,
		Config:           a.cfg,
		Agents:           agent.CustomAgents(a.agents),
		SetupAgent:       a.setupAgent,
		UpdateAgent:      a.updateAgent,
		Store:            st,
		Skills:           a.skillsSection,
		SubagentLimit:    subagent.LimitHook(a.cfg),
		ToolMiddlewares:  a.toolMiddlewares(),
		ModelMiddlewares: a.modelMiddlewares(),
		MCPServers:       a.mcpServers,
		Catalogs:         a.catalogs,
		Logger:           a.logger,
		Authorizer:       a.authz,
		Memory:           a.agentMemory(),
		Telemetry:        a.telemetry,
		RunEnded:         a.closeBrowser,
		LLMCalls:         a.llmCalls,
	}
}

// mcpServers is the current mcpServers map of the extensions file (for
// keyword routing of deferred tools).
func (a *app) mcpServers() map[string]config.MCPServer {
	ext, _, _ := a.extensionsSource().Get()
	if ext == nil {
		return nil
	}
	return ext.MCPServers
}

// toolMiddlewares are the tool middlewares of the lead and of subagents,
// outside the agent's own (error handling, deferred guard,
// clarification): the tool-output budget (outermost, so that it sees
// every result of every source), authorization, guardrails (the
// guardrails section), the approval policy and the skills tool policy.
func (a *app) toolMiddlewares() []tool.Middleware {
	mws := []tool.Middleware{a.toolOutputBudget().ToolMiddleware()}
	if a.authz.Enabled() {
		// Right after the budget, before guardrails: a call the role may
		// not make is refused first (docs/differences.md, "Authorization").
		mws = append(mws, a.authz.ToolMiddleware())
	}
	if a.guard != nil {
		// Guardrails after authorization, as DeerFlow orders them: the
		// provider is never asked about a call the role may not make.
		mws = append(mws, a.guard.ToolMiddleware())
	}
	// The approval policy: after the budget, authorization and guardrails
	// (a call they refuse is never asked about), before the skills policy.
	mws = append(mws, a.approval())
	return append(append(mws, a.policy.ToolMiddleware()), a.toolProgressTool()...)
}

// modelMiddlewares are the model middlewares of the lead and of
// subagents: the tool-output budget of the thread's history, the skills
// tool policy and image injection.
func (a *app) modelMiddlewares() []tool.ModelMiddleware {
	return []tool.ModelMiddleware{
		a.toolOutputBudget().ModelMiddleware(),
		a.policy.ModelMiddleware(),
		onlyWhenBound(builtin.ViewImageName, builtin.NewViewImageMiddleware(a.layout)),
		unlessBound(builtin.ViewImageName, builtin.NewToolImageNoteMiddleware()),
		a.toolProgressModel(),
	}
}

// toolOutputBudget is the tool_output section's budget, saving into each
// thread's outputs folder of the app's layout.
func (a *app) toolOutputBudget() *agent.ToolOutputBudget {
	return agent.NewToolOutputBudget(agent.ToolOutputBudgetOptions{Config: a.cfg.ToolOutput, Layout: a.layout, Logger: a.logger})
}

// skillsSection renders the <skill_system> prompt section of a user's
// enabled skills.
func (a *app) skillsSection(ctx context.Context, user string, allowed []string) (string, error) {
	all, err := a.skills.Load(ctx, user)
	if err != nil && all == nil {
		return "", err
	}
	if len(all) == 0 {
		return "", nil
	}
	opts := skills.PromptOptions{Allowlist: allowed, ContainerPath: a.cfg.Skills.ContainerPath, SkillEvolution: a.cfg.SkillEvolution.Enabled}
	if a.cfg.Skills.DeferredDiscovery {
		return skills.RenderIndexPrompt(all, opts), nil
	}
	return skills.RenderPrompt(all, opts), nil
}

// onlyWhenBound applies mw only to requests that bind the named tool: the
// image injection must never send images to a model that cannot see them
// (view_image is bound only for supports_vision models).
func onlyWhenBound(name string, mw tool.ModelMiddleware) tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		wrapped := mw(next)
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if slices.ContainsFunc(call.Request.Tools, func(d model.ToolDefinition) bool { return d.Name == name }) {
				return wrapped(ctx, call)
			}
			return next(ctx, call)
		}
	}
}

// unlessBound applies mw only to requests that do not bind the named
// tool: models without vision (no view_image) get a note about the images
// tool results returned instead of the images.
func unlessBound(name string, mw tool.ModelMiddleware) tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		wrapped := mw(next)
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if slices.ContainsFunc(call.Request.Tools, func(d model.ToolDefinition) bool { return d.Name == name }) {
				return next(ctx, call)
			}
			return wrapped(ctx, call)
		}
	}
}

// toolsFor returns the tools a run with these flags binds, exactly as the
// lead-agent factory builds them (setup_agent, update_agent, deferred
// marks and tool_search included). Without any model configured it falls
// back to the plain assembly.
func (a *app) toolsFor(ctx context.Context, f *assemblyFlags, threadID string) (*toolset.Toolset, error) {
	return a.toolsWith(ctx, a.assembler, f, threadID)
}

// toolsWith is toolsFor with the assembler asm.
func (a *app) toolsWith(ctx context.Context, asm *toolset.Assembler, f *assemblyFlags, threadID string) (*toolset.Toolset, error) {
	if err := a.checkModelFlag(f.model); err != nil {
		return nil, err
	}
	if len(a.cfg.Models) == 0 {
		ts, err := a.assemble(ctx, asm, f)
		if err == nil { // the factory's filter, without a factory
			ts.Entries = agent.FilterEntries(ctx, a.authz, map[string]any{"user_id": a.g.user, "user_role": a.userRole()}, ts.Entries)
		}
		return ts, err
	}
	opts := a.factoryOptions(nil)
	opts.Assembler = asm
	fac, err := agent.NewFactory(opts)
	if err != nil {
		return nil, err
	}
	lead, err := fac.Build(ctx, agent.Request{ThreadID: threadID, UserID: a.g.user, UserRole: a.userRole(), AgentName: f.agent, ModelName: f.model,
		IsBootstrap: f.bootstrap, SubagentEnabled: f.subagents, NoMCP: f.noMCP, ToolGroups: f.groupList()})
	if err != nil {
		return nil, err
	}
	return lead.Tools, nil
}
