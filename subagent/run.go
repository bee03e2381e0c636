package subagent

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// outcome is what execute reports; the caller decides timed_out and
// cancelled from the contexts.
type outcome struct {
	Status     builtin.TaskStatus
	StopReason builtin.TaskStopReason
	Result     string
	Error      string
	// Pause is set when the run stopped for a human's approval.
	Pause *thread.SubagentApproval
}

func failed(format string, args ...any) outcome {
	return outcome{Status: builtin.TaskFailed, Error: fmt.Sprintf(format, args...)}
}

// execute builds the subagent for one task and runs it to the end.
func (x *Executor) execute(ctx context.Context, e *execution, typ Type, req builtin.TaskRequest, log *slog.Logger) outcome {
	chat, err := x.model(ctx, e.modelName)
	if err != nil {
		return failed("%v", err)
	}
	tools, def, err := x.tools(ctx, typ, req, e.modelName)
	if err != nil {
		return failed("%v", err)
	}
	prompt, err := x.systemPrompt(ctx, typ, req, def)
	if err != nil {
		return failed("skills: %v", err)
	}

	bud := agent.NewTokenBudget(typ.TokenBudget) // one per execution: it counts this run alone
	cs := x.chain(def, bud, log)
	cs.LLMErrorHandling = agent.LLMErrorHandling(agent.LLMErrorHandlingOptions{Calls: x.opts.LLMCalls, ModelName: e.modelName})
	chain := cs.Build()
	a, err := agent.New(agent.Options{
		Model: chat, Tools: tools, ToolMiddlewares: chain.Tool, ModelMiddlewares: chain.Model,
		SystemPrompt: prompt, MaxTurns: typ.MaxTurns, ToolConcurrency: x.opts.ToolConcurrency,
		Logger: log, Summarization: x.summarization(ctx, e.modelName, log), Telemetry: x.opts.Telemetry,
	})
	if err != nil {
		return failed("%v", err)
	}

	out, last, runErr := runTask(ctx, a, e, typ, req)
	if runErr != nil {
		if ctx.Err() != nil {
			return outcome{} // timed out or cancelled: the caller decides
		}
		return failed("%v", runErr)
	}
	if out.Reason == agent.StopApproval {
		return pausedOutcome(typ.Name, out.State)
	}
	return finalOutcome(out, last, bud.Capped())
}

// systemPrompt returns the subagent's system prompt: the type's, then the
// skills section (unless the task asks for no skills), then the deferred
// tools' sections. The error is the skills section's.
func (x *Executor) systemPrompt(ctx context.Context, typ Type, req builtin.TaskRequest, def *deferred.Deferred) (string, error) {
	prompt := typ.SystemPrompt
	if x.opts.Skills != nil && (req.Skills == nil || len(req.Skills) > 0) {
		s, err := x.opts.Skills(ctx, req.UserID, req.Skills)
		if err != nil {
			return "", err
		}
		prompt = joinSections(prompt, s)
	}
	if def != nil {
		prompt = joinSections(prompt, def.Prompt)
		prompt = joinSections(prompt, def.RoutingPrompt)
	}
	return prompt, nil
}

// runTask runs agent a on the task's prompt, in the parent's thread
// state and runtime context marked as a subagent's, reporting each
// message to e. It returns the run's outcome and the last message.
func runTask(ctx context.Context, a *agent.Agent, e *execution, typ Type, req builtin.TaskRequest) (*agent.Outcome, model.Message, error) {
	rc := agent.RuntimeContext{ThreadID: req.ThreadID, UserID: req.UserID, RunID: req.RunID,
		ModelName: e.modelName, ToolGroups: req.ToolGroups, AvailableSkills: req.Skills}.Map(req.Context)
	rc["subagent_type"], rc["disable_clarification"], rc["is_subagent"] = typ.Name, true, true
	// A subagent asks for approvals only when the parent relays them.
	rc[agent.ContextApprovalRelay] = req.ApprovalRelay
	state, msgs := &thread.State{}, []model.Message{model.UserText(req.Prompt)}
	if req.Resume != nil {
		var err error
		if state, msgs, err = resumedInput(req.Resume); err != nil {
			return nil, model.Message{}, err
		}
	}
	if err := state.Apply(&thread.Update{ApprovalGrants: req.ApprovalGrants}); err != nil {
		return nil, model.Message{}, err
	}
	if req.Sandbox != nil {
		sb := *req.Sandbox
		state.Sandbox = &sb
	}
	if req.ThreadData != nil {
		td := *req.ThreadData
		state.ThreadData = &td
	}
	var last model.Message
	out, err := a.Invoke(ctx, agent.Input{
		ThreadID: req.ThreadID, UserID: req.UserID, AgentName: req.AgentName, RunID: req.RunID,
		Messages: msgs, State: state, Context: rc,
	}, func(ev agent.Event) {
		if ev.Type == agent.EventMessage && ev.Message != nil {
			last = *ev.Message
			e.observe(last)
		}
	})
	return out, last, err
}

// finalOutcome turns a finished run into the task's outcome: the answer
// (the last message, or the result of the tool that ended the run) and
// why the run stopped early, if it did (tokenCapped: the token budget ran
// out). A run stopped early without an answer failed.
func finalOutcome(out *agent.Outcome, last model.Message, tokenCapped bool) outcome {
	answer := strings.TrimSpace(last.Content)
	if _, ok := agent.IsErrorFallback(last); ok && out.Reason == agent.StopError {
		// A model call failed after its retries: the task failed, with
		// the text the user would have read (DeerFlow's executor).
		return outcome{Status: builtin.TaskFailed, Error: cmp.Or(answer, out.Error)}
	}
	var stop builtin.TaskStopReason
	switch out.Reason {
	case agent.StopMaxTurns:
		stop = builtin.StopTurnCapped
	case agent.StopLoopCapped:
		stop = builtin.StopLoopCapped
	case agent.StopEnd, agent.StopReturnDirect, agent.StopClarification:
		// A tool ended the run: its result is the answer.
		if n := len(out.State.Messages); n > 0 {
			answer = strings.TrimSpace(out.State.Messages[n-1].Content)
		}
	}
	if tokenCapped {
		stop = builtin.StopTokenCapped
	}
	if stop == builtin.StopTurnCapped && len(last.ToolCalls) > 0 {
		// The last answer asked for more work: it is not a final answer.
		answer = ""
	}
	if stop != "" && answer == "" {
		return outcome{Status: builtin.TaskFailed, StopReason: stop,
			Error: fmt.Sprintf("Subagent stopped (%s) after %d turns without a final answer.", stop, out.Turns)}
	}
	return outcome{Status: builtin.TaskCompleted, StopReason: stop, Result: answer}
}

// tools assembles the subagent's tools (DeerFlow's subagents/executor.py): the parent's
// tool groups, the effective model, never the task tool; then the type's
// allowlist and denylist; then the deferred-tool setup over the MCP tools
// that are left.
func (x *Executor) tools(ctx context.Context, typ Type, req builtin.TaskRequest, modelName string) ([]*tool.Tool, *deferred.Deferred, error) {
	ts, err := x.opts.Assembler.Assemble(ctx, toolset.Options{Config: x.cfg, Groups: req.ToolGroups,
		IncludeMCP: true, User: req.UserID, ModelName: modelName, SubagentEnabled: false})
	if err != nil {
		return nil, nil, err
	}
	entries := slices.DeleteFunc(slices.Clone(ts.Entries), func(en toolset.Entry) bool {
		name := en.Tool.Name
		return name == builtin.TaskName || (typ.Tools != nil && !slices.Contains(typ.Tools, name)) ||
			slices.Contains(typ.DisallowedTools, name)
	})
	entries = agent.FilterEntries(ctx, x.opts.Authorizer, req.Context, entries)
	// The parent agent's MCP servers (mcp_plugins), already checked when
	// the parent was built.
	entries = agent.BindAgentMCP(entries, agent.MCPSpecFromContext(req.Context), nil, x.logger)
	var servers map[string]config.MCPServer
	if x.cfg.ToolSearch.Enabled && x.opts.MCPServers != nil {
		servers = x.opts.MCPServers()
	}
	window := 0
	if m, ok := x.cfg.Model(modelName); ok {
		window = m.ContextWindow()
	}
	chat, _ := x.model(ctx, modelName) // built by the caller already
	def, err := agent.DeferTools(entries, agent.DeferOptions{Catalogs: x.opts.Catalogs, Config: x.cfg.ToolSearch, Servers: servers,
		ContextWindow: window, Model: chat})
	if err != nil {
		return nil, nil, err
	}
	tools := make([]*tool.Tool, 0, len(entries)+1)
	for _, en := range entries {
		tools = append(tools, en.Tool)
	}
	if def != nil && def.ToolSearch != nil && !slices.ContainsFunc(tools, func(t *tool.Tool) bool { return t.Name == def.ToolSearch.Name }) {
		tools = append(tools, def.ToolSearch)
	}
	return tools, def, nil
}

// chain says which middlewares a subagent's chains hold: the lead's
// embedder middlewares, its own loop detector, its token budget and the
// safety finish reason; never clarification (subagents run with
// disable_clarification).
func (x *Executor) chain(def *deferred.Deferred, bud *agent.TokenBudget, log *slog.Logger) agent.ChainSpec {
	spec := agent.ChainSpec{ToolMiddlewares: x.opts.ToolMiddlewares, ModelMiddlewares: x.opts.ModelMiddlewares,
		Deferred: def, TokenBudget: bud.Middleware()}
	if x.cfg.LoopDetection.Enabled {
		// A detector of its own: detectors track per thread, and the
		// subagent shares its thread id with the parent and its siblings.
		spec.LoopDetection = agent.NewLoopDetector(x.cfg.LoopDetection, log).Middleware()
	}
	spec.SafetyFinishReason = x.safety
	return spec
}

func joinSections(a, b string) string {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// summarization returns the summarization options of a subagent run on
// the model runModel, as DeerFlow's subagent chain installs them (with no
// memory flush, which Antler does not have): summaries by
// summarization.model_name, else by the subagent's own model.
func (x *Executor) summarization(ctx context.Context, runModel string, log *slog.Logger) *agent.SummarizationOptions {
	sc := x.cfg.Summarization
	if !sc.Enabled {
		return nil
	}
	var summary model.ChatModel
	if sc.ModelName != "" && sc.ModelName != runModel {
		m, err := x.model(ctx, sc.ModelName)
		if err != nil {
			log.Warn("cannot build the summary model; summaries use the subagent's model", "model", sc.ModelName, "err", err)
		}
		summary = m
	}
	window := 0
	if m, ok := x.cfg.Model(runModel); ok {
		window = m.ContextWindow()
	}
	return agent.SummarizationFromConfig(sc, summary, window)
}
