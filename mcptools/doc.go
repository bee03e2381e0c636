// Package mcptools turns the MCP servers of extensions_config.json into
// Antler tools, on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// Start with [New]: a [Manager] reads the mcpServers section through an
// [ExtensionsSource] (normally a *config.ExtensionsCache), discovers the
// tools of every enabled server concurrently, each bounded by its
// session_init_timeout, and serves them to toolset.Assemble as a
// toolset.MCPSource ([Manager.Tools]). A server that fails, hangs or crashes
// is skipped with one warning and costs only its own tools (and, once, its
// bound). [Manager.ToolsOf] discovers only the servers a caller needs, such
// as the one server of a tool about to be called ([Manager.ServersFor]):
// the others are neither started nor waited for.
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
// server and thread for stdio servers, or one per server with
// "process_scope": "shared". Stdio processes are bounded by memory (see
// [Options.MaxProcesses]): at the bound the least recently used idle one
// is closed, never one with a call in flight, and a process idle for
// [Options.IdleTimeout] is closed. A
// stdio server that died is started again on the next call. Every call is
// bounded: by the server's tool_call_timeout, else by
// [Options.DefaultCallTimeout] (10 minutes when zero). A
// call abandoned at its bound or by its caller's context is cancelled
// with notifications/cancelled, sent by the SDK; a timeout becomes an error
// result naming the server, the tool and tool_call_timeout.
//
// A stdio server's stdout is read line by line: a line that is not a
// JSON-RPC message (a banner, a log line) is skipped, as the TypeScript
// and Python SDKs skip it, instead of ending the session; a message line
// is held up to the SDK's bound, 16 MiB. The first such line of a server is logged as a
// warning with its beginning, later ones at debug level.
//
// # Threads and files
//
// With [Options.Layout] set, a call made with a user and thread to a stdio
// server runs as DeerFlow runs it (DeerFlow's mcp/session_pool.py). Before every such call
// the thread's folders are created (through the [vpath.Layout]) with
// workspace/.mcp/tmp at mode 0700; the thread's session is started in its
// workspace folder unless the server configures cwd, with TMPDIR, TMP and
// TEMP set to workspace/.mcp/tmp unless the server's env sets them.
// Around the call the workspace is snapshot (paths, sizes and modification
// times; not for a workspace of more than 1024 files, whose
// bare file names are then left alone; the second walk happens only when
// the result has a word that looks like a file name), and the result is
// translated:
// file:// resource links and path-like words in text (absolute, or
// relative with a slash) that name an existing file of the thread's
// user-data folder become /mnt/user-data/... paths, trailing punctuation
// kept; a bare file name is rewritten only when exactly one file of that
// name in the workspace was created or modified by the call. Nothing is
// copied and other paths are left as they are. Finally every host path of
// the thread's folders left in the result's text (a missing file, a
// folder, a path with a space, the server's stderr in an error) is masked
// with [vpath.Masker]. The structured_content artifact, which the model
// never reads, is passed on unchanged. Two calls of one thread running at
// once may see each other's new files.
//
// Errors: a cancelled caller context is returned as a Go error; everything
// the server or the transport does wrong (a timeout, a crash, isError, an
// unknown tool) becomes an "Error: ..." result the model reads.
//
// [Manager.Status] reports per-server connection state for progress
// displays, and [Manager.Check] runs the doctor check of each server.
//
// # Elicitation, resources and prompts
//
// With [Options.ElicitationHandler] set, form and url elicitation are
// offered; the handler's ctx names the asking server
// ([ElicitationServer]) and [ElicitFields] reads a form's schema into
// fields a human can be asked ([ElicitField.Parse]). Once a listed
// server states the resources capability, the tools list_mcp_resources
// and read_mcp_resource join the server tools (resources.go).
// [Manager.Prompts] and [Manager.GetPrompt] offer the servers' prompts
// to a client that shows them to the human; they are no tools.
package mcptools
