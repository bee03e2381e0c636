// Package agent runs agents: one loop that calls a chat model, runs the
// tool calls of each answer concurrently, merges their state updates with
// the thread reducers and checkpoints the thread after every step.
//
// Start with [New] and [Agent.Run] (an iterator of [Event]s) or
// [Agent.Invoke] (a callback and the final [Outcome]). Streaming is a way
// to observe the loop, not a second loop.
//
// Middlewares wrap the two calls the loop makes: tool.ModelMiddleware
// around each model request (WrapModelCall) and tool.Middleware around
// each tool call (WrapToolCall), the first listed outermost. The package
// provides DeerFlow's runtime middlewares that the agent itself owns:
// [Clarification] (ask_clarification ends the run and waits for the user),
// [ToolErrors] (failures and panics become error results with
// deerflow_tool_meta), [DanglingToolCalls] (unanswered tool calls get
// placeholder results before the next request) and [LoopDetector]
// (repeated tool calls get a warning, then a forced stop). The embedder
// installs [ToolOutputBudget], DeerFlow's tool-output budget (oversized
// results are saved under the thread's outputs and replaced by a typed
// synopsis) with Antler's [MaxToolResultBytes] ceiling. [TitleOptions]
// (Options.Title) titles a thread after its first exchange, DeerFlow's
// TitleMiddleware. [SummarizationOptions] (Options.Summarization)
// summarises the older messages of a long thread into its summary_text
// before a model call, DeerFlow's summarization middleware; [Agent.Compact]
// does it on request.
//
// [Factory] builds DeerFlow's lead agent for a run: the custom agent by
// name, the model with its fallback, the assembled tools with
// setup_agent/update_agent, the middleware chain and the system prompt.
package agent
