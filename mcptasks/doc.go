// Package mcptasks is DeerFlow's durable runtime for the long-running
// tasks of MCP servers (DeerFlow's mcp/tasks and its McpTaskService).
//
// A server declares, in extensions_config.json's task_toolsets, toolsets
// of three of its tools: submit (starts work, answers
// {"task_id": ..., "status": "running"} as structuredContent), status and
// cancel (both take {"task_id": ...} and answer the task's state). The
// agents see only the submit tool, through [Source]: calling it submits
// the work, stores the task ([store.MCPTasks]) and answers a task id at
// once. A [Runtime] polls the stored tasks in the background ([Runtime.Run])
// until they end, and carries out cancellations asked with
// [Runtime.Cancel] (the cancel_background_task tool), retrying while the
// server is unreachable. The results are stored (bounded by
// mcp_tasks.max_result_bytes) and shown by list_background_tasks.
//
// Tasks survive restarts: they live in the store, and a runtime's first
// pass takes over what was due. Several runtimes may share one database
// (replicas): each task is leased to one runtime for each poll or
// cancellation (mcp_tasks.lease_seconds), so no task is polled by two at
// once, and the answer of a runtime whose lease expired is refused.
//
// Every quantity is bounded: active tasks per thread
// ([MaxActivePerThread]), kept ended tasks per thread
// ([KeepEndedPerThread]), tasks polled at once
// (max_concurrent_polls), each server call (lease_seconds), the wait
// between polls (poll_after_seconds at most a day, backoff at most
// max_poll_backoff_seconds), and what a server's answer may store
// (results, errors, questions).
package mcptasks
