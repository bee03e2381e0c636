// Package mcptools turns the MCP servers of extensions_config.json into
// Antler tools, on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// Start with [New]: a [Manager] reads the mcpServers section through an
// [ExtensionsSource] (normally a *config.ExtensionsCache), discovers the
// tools of every enabled server concurrently, each bounded by its
// session_init_timeout, and serves them to toolset.Assemble as a
// toolset.MCPSource ([Manager.Tools]). A server that fails, hangs or crashes
// is skipped with one warning and costs only its own tools.
//
// Tools are named "<server>_<tool>" (or the raw name with
// tool_name_prefix: false); names outside ^[A-Za-z0-9_-]{1,64}$ are
// sanitised deterministically (see [ToolName]) and the server is still
// called with its own name. The tool list is cached: it is rebuilt only
// when the extensions file's content changes for a server, when a server
// sends notifications/tools/list_changed (only that server is listed
// again), or after [Manager.Reset]. While nothing changed, Tools returns the
// very same slice.
//
// Sessions are reused: one per server for sse and http servers, one per
// server and thread for stdio servers (LRU-bounded, closed on eviction). A
// stdio server that died is started again on the next call. Calls are
// bounded by tool_call_timeout; a cancelled call sends
// notifications/cancelled to the server.
//
// Errors: a cancelled caller context is returned as a Go error; everything
// the server or the transport does wrong (a timeout, a crash, isError, an
// unknown tool) becomes an "Error: ..." result the model reads.
//
// [Manager.Status] reports per-server connection state for progress
// displays, and [Manager.Check] runs the doctor check of each server.
package mcptools
