package mcptools

import (
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/tool"
)

// toolMeta returns the Meta labels of one listed tool: its server, its
// own name, the transport, and the annotations the server states
// (tool.MetaMCPAnnotationPrefix + "destructiveHint" is "true" or
// "false"), which the tool policy matches. An annotation the listing
// leaves out gets no key; the policy applies the MCP specification's
// default. readOnlyHint and idempotentHint have no "absent" in the SDK's
// type, so a stated annotations object always carries them.
func toolMeta(server, raw, transport string, a *mcp.ToolAnnotations) map[string]string {
	// The source label is set here so that the assembler, which labels
	// every bound tool by source, does not copy each MCP tool per list.
	meta := map[string]string{MetaServer: server, MetaTool: raw, MetaTransport: transport, tool.MetaSource: "mcp"}
	if a == nil {
		return meta
	}
	meta[tool.MetaMCPAnnotationPrefix+"readOnlyHint"] = strconv.FormatBool(a.ReadOnlyHint)
	meta[tool.MetaMCPAnnotationPrefix+"idempotentHint"] = strconv.FormatBool(a.IdempotentHint)
	if a.DestructiveHint != nil {
		meta[tool.MetaMCPAnnotationPrefix+"destructiveHint"] = strconv.FormatBool(*a.DestructiveHint)
	}
	if a.OpenWorldHint != nil {
		meta[tool.MetaMCPAnnotationPrefix+"openWorldHint"] = strconv.FormatBool(*a.OpenWorldHint)
	}
	return meta
}
