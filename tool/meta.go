package tool

// Meta keys that more than one package reads (see Tool.Meta and
// Call.Meta). They are labels for policies and logs, never shown to the
// model.
const (
	// MetaSource is where a bound tool comes from: "config", "builtin",
	// "mcp" or "acp". toolset.Assembler stamps it on every tool it binds.
	MetaSource = "source"
	// MetaMCPServer is the MCP server's name in extensions_config.json.
	MetaMCPServer = "mcp_server"
	// MetaMCPAnnotationPrefix starts the keys of the MCP tool annotations
	// a server states in its tool list ("mcp_annotation.destructiveHint"
	// is "true" or "false"); an annotation the server leaves out has no
	// key.
	MetaMCPAnnotationPrefix = "mcp_annotation."
)
