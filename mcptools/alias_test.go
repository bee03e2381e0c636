package mcptools_test

import (
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

type (
	toolT     = tool.Tool
	resultT   = tool.Result
	mcpServer = config.MCPServer
)
