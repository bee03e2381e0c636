package customagent

import "github.com/google/uuid"

// InstallationID is the id DeerFlow gives an MCP server that declares
// none in its capability metadata (a UUID version 5 in the URL namespace
// of "deerflow:mcp:<server>"), which its agents' mcp_plugins hold: an
// entry of MCPPlugins may be a server's name or this id of it, so that
// an agent written by DeerFlow keeps naming the same servers.
func InstallationID(server string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("deerflow:mcp:"+server)).String()
}
