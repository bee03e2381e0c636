// Package acptools implements invoke_acp_agent, the one tool through which
// an Antler agent delegates a task to an external agent that speaks the
// Agent Client Protocol (ACP) over stdio, such as an ACP adapter for a
// coding CLI.
//
// Every configured acp_agents entry is reachable through the same tool.
// A call spawns the agent's command in its own process group, in the
// thread's ACP workspace ({home}/users/{user}/threads/{thread}/acp-workspace,
// or {home}/acp-workspace when the call has no valid thread), runs
// initialize, session/new (with the enabled MCP servers of
// extensions_config.json in ACP form) and session/prompt on
// github.com/coder/acp-go-sdk, and returns the concatenated
// agent_message_chunk text. Thought chunks, tool-call updates and plans are
// not part of the result.
//
// The client side serves the agent's fs/read_text_file and
// fs/write_text_file requests inside the workspace only (writes are
// atomic), answers permission requests by the agent's
// auto_approve_permissions policy, and refuses terminal requests. When the
// agent does not finish within timeout_seconds, or the caller's context is
// cancelled, the whole process group is killed. The files the agent leaves
// in the workspace are visible to the lead agent, read-only, under
// /mnt/acp-workspace through the sandbox tools.
//
// Start with [New], then pass [Invoker.Tool] to the tool assembler.
package acptools
