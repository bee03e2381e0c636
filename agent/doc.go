// Package agent runs agents: one loop that calls a chat model, runs the
// tool calls of each answer concurrently, merges their state updates with
// the thread reducers and checkpoints the thread after every step.
//
// Start with [New] and [Agent.Run] (an iterator of [Event]s) or
// [Agent.Invoke] (a callback and the final [Outcome]). Streaming is a way
// to observe the loop, not a second loop.
//
// Middlewares wrap the two calls the loop makes: tool.ModelMiddleware
// around each model request and tool.Middleware around each tool call,
// the first listed outermost; agent/recipe.go ([ChainSpec]) puts them in
// their one order. DeerFlow's middlewares live in the files named
// middleware_*.go: [Clarification] (ask_clarification ends the run and
// waits for the user), [DanglingToolCalls] (unanswered tool calls get
// placeholder results before the next request), [LoopDetector] (repeated
// tool calls get a warning, then a forced stop), the tool error
// classification (deerflow_tool_meta on every result of tool.Invoke),
// [ToolOutputBudget], DeerFlow's tool-output budget (oversized results
// are saved under the thread's outputs and replaced by a typed synopsis)
// with Antler's [MaxToolResultBytes] ceiling, which the embedder
// installs, [TitleOptions] (Options.Title) for DeerFlow's TitleMiddleware
// and [SummarizationOptions] (Options.Summarization) for its
// summarization middleware ([Agent.Compact] summarises on request).
//
// [Factory] builds DeerFlow's lead agent for a run: the custom agent by
// name, the model with its fallback, the assembled tools with
// setup_agent/update_agent, the middleware chain and the system prompt.
package agent
