package agent

import (
	"fmt"
	"maps"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/tool"
)

// This file is the one recipe for an agent's middleware chains and its
// runtime context, shared by the lead agent (Factory.Build) and by
// subagents (package subagent), so that the order is defined once. See
// docs/architecture.md, "Building an agent".

// ChainSpec says which middlewares an agent's chains hold. The zero value
// holds only what every agent has: DeerFlow's input and tool-result
// sanitisation and dangling-call repair. (DeerFlow's tool
// error handling is not a middleware here: the loop calls every tool
// through tool.Invoke, the one place that turns errors and panics into
// results, and classifies what it returns.)
type ChainSpec struct {
	// ToolMiddlewares are the embedder's tool middlewares (skill policy,
	// output budget, ...), outermost, in the order given.
	ToolMiddlewares []tool.Middleware
	// ModelMiddlewares are the embedder's model middlewares (skill
	// policy, image injection, ...), placed after dangling-call repair
	// and before the deferred-tool middlewares.
	ModelMiddlewares []tool.ModelMiddleware
	// Deferred adds the deferred-tool guard and the routing and filter
	// model middlewares; nil adds none.
	Deferred *deferred.Deferred
	// SubagentLimit caps task calls per response (lead agent); nil adds
	// none.
	SubagentLimit tool.ModelMiddleware
	// LoopDetection warns about and stops repeated tool calls; nil adds
	// none.
	LoopDetection tool.ModelMiddleware
	// TokenBudget caps the run's tokens (TokenBudget: the lead's
	// token_budget, a subagent's subagents.token_budget); nil adds none.
	TokenBudget tool.ModelMiddleware
	// LLMErrorHandling retries failed model calls and turns a call that
	// still fails into an assistant message (LLMErrorHandling); nil adds
	// none.
	LLMErrorHandling tool.ModelMiddleware
	// TerminalResponse asks once more for an empty final answer after
	// tool calls, then fails the run with an explanation
	// (TerminalResponse, lead agent).
	TerminalResponse bool
	// ModelLength ends a run whose final answer the provider cut at its
	// output limit with stop reason model_length_capped
	// (ModelLengthFinishReason, lead agent).
	ModelLength bool
	// SafetyFinishReason drops the tool calls of a response the
	// provider stopped for safety (SafetyFinishReason); nil adds none.
	SafetyFinishReason tool.ModelMiddleware
	// Clarification intercepts ask_clarification and ends the run (lead
	// agent); false leaves the call to the tool.
	Clarification bool
}

// Chain is a built pair of middleware chains, first listed outermost,
// with the name of each entry for review and golden files.
type Chain struct {
	Tool       []tool.Middleware
	Model      []tool.ModelMiddleware
	ToolNames  []string
	ModelNames []string
}

func (c *Chain) addTool(name string, mw tool.Middleware) {
	c.Tool, c.ToolNames = append(c.Tool, mw), append(c.ToolNames, name)
}

func (c *Chain) addModel(name string, mw tool.ModelMiddleware) {
	c.Model, c.ModelNames = append(c.Model, mw), append(c.ModelNames, name)
}

// Build returns the chains in Antler's one order.
//
// Tool calls: the embedder's middlewares, the sanitisation of remote
// tool results, the deferred guard, clarification (innermost, so that nothing between it
// and the tool rewrites its interrupt).
//
// Model requests: the sanitisation of the user's input, dangling-call
// repair, LLM error handling (so that a retry runs everything inside it
// again, as DeerFlow places it in its shared base), the embedder's
// middlewares, deferred routing then the deferred filter, the subagent
// limit, loop detection, the token budget, the terminal response guard,
// the model length finish reason, the safety finish reason (innermost, so
// that it sees the provider's response first and the guards outside it
// count the calls it leaves, as DeerFlow registers it last of them).
func (s ChainSpec) Build() Chain {
	var c Chain
	for i, mw := range s.ToolMiddlewares {
		c.addTool(fmt.Sprintf("embedder[%d]", i), mw)
	}
	c.addTool("tool_result_sanitization", SanitizeToolResults()) // inside the output budget, as in DeerFlow
	if s.Deferred != nil {
		c.addTool("deferred_guard", s.Deferred.GuardTools)
	}
	if s.Clarification {
		c.addTool("clarification", Clarification())
	}

	c.addModel("input_sanitization", SanitizeInput()) // outermost: everything inside sees the sanitised request
	c.addModel("dangling_tool_calls", DanglingToolCalls())
	if s.LLMErrorHandling != nil {
		c.addModel("llm_error_handling", s.LLMErrorHandling)
	}
	for i, mw := range s.ModelMiddlewares {
		c.addModel(fmt.Sprintf("embedder[%d]", i), mw)
	}
	if s.Deferred != nil {
		if s.Deferred.Routing != nil {
			c.addModel("deferred_routing", s.Deferred.Routing) // writes promotions the filter reads
		}
		c.addModel("deferred_filter", s.Deferred.FilterModel)
	}
	if s.SubagentLimit != nil {
		c.addModel("subagent_limit", s.SubagentLimit)
	}
	if s.LoopDetection != nil {
		c.addModel("loop_detection", s.LoopDetection)
	}
	if s.TokenBudget != nil {
		c.addModel("token_budget", s.TokenBudget)
	}
	if s.TerminalResponse {
		c.addModel("terminal_response", TerminalResponse())
	}
	if s.ModelLength {
		c.addModel("model_length_finish_reason", ModelLengthFinishReason())
	}
	if s.SafetyFinishReason != nil {
		c.addModel("safety_finish_reason", s.SafetyFinishReason)
	}
	return c
}

// RuntimeContext holds the identity values every agent's tools read from
// their runtime context (DeerFlow's configurable keys).
type RuntimeContext struct {
	ThreadID, UserID, RunID string
	ModelName               string
	SubagentEnabled         bool
	// ToolGroups and AvailableSkills are passed on to subagents by the
	// task tool (nil: no filter).
	ToolGroups, AvailableSkills any
}

// Map returns base (not modified) with the identity keys set.
func (r RuntimeContext) Map(base map[string]any) map[string]any {
	rc := maps.Clone(base)
	if rc == nil {
		rc = map[string]any{}
	}
	rc["thread_id"], rc["user_id"], rc["run_id"] = r.ThreadID, r.UserID, r.RunID
	rc["model_name"], rc["subagent_enabled"] = r.ModelName, r.SubagentEnabled
	rc[builtin.ContextToolGroups], rc[builtin.ContextAvailableSkills] = r.ToolGroups, r.AvailableSkills
	return rc
}
