// Package subagent runs the tasks the lead agent delegates with the task
// tool (DeerFlow's subagents package).
//
// Start with [New]: an [Executor] implements builtin.Delegator, so
// builtin.NewTask(executor) is the task tool. Each task runs a fresh agent
// loop (agent.New) with its own state: no parent history, the parent's
// sandbox and thread data, the parent's thread, user and run ids, and the
// tools toolset.Assembler gives with SubagentEnabled false, so a subagent
// can never delegate further. Types are the built-ins general-purpose and
// bash (hidden when host bash is off) and subagents.custom_agents, with
// subagents.agents overrides ([ResolveType]). Each execution is bounded by
// its type's turn cap, token budget and timeout, can be cancelled, and
// ends in one of the statuses of the result contract (builtin.TaskStatus).
// subagents.workers bounds how many run at once.
//
// [LimitMiddleware] (and [LimitHook], its adapter for the lead-agent
// factory) caps the task calls of one model response and of one run.
// Beyond DeerFlow, both caps and the worker count are configuration, so
// batch workloads of hundreds of tasks run when configured to.
package subagent
