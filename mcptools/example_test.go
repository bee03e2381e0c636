package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

func Example() {
	ctx := context.Background()
	// An MCP server in this process, reached through Options.Dial; a real
	// configuration names a command (stdio) or a URL (sse, http).
	srv := mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "say hello", Description: "Greets someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct{ Name string }) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name}}}, nil, nil
		})
	ext := &config.Extensions{MCPServers: map[string]config.MCPServer{
		"demo": {Name: "demo", Enabled: true, Type: "http", URL: "http://127.0.0.1:1/", ToolNamePrefix: true},
	}}
	m := mcptools.New(mcptools.Options{
		Extensions: mcptools.Static(ext),
		Dial: func(ctx context.Context, _ config.MCPServer) (mcp.Transport, error) {
			client, server := mcp.NewInMemoryTransports()
			_, err := srv.Connect(ctx, server, nil)
			return client, err
		},
	})
	defer m.Close()

	tools, err := m.Tools(ctx)
	if err != nil {
		panic(err)
	}
	hello := tools[0]
	fmt.Println(hello.Name, "calls", hello.Meta[mcptools.MetaTool], "on", hello.Meta[mcptools.MetaServer])
	res, err := hello.Handler(ctx, &tool.Call{}, json.RawMessage(`{"Name":"Ada"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.TextContent())
	// Output:
	// demo_say_hello calls say hello on demo
	// Hello, Ada
}

func ExampleToolName() {
	fmt.Println(mcptools.ToolName("github", "search_issues", true))
	fmt.Println(mcptools.ToolName("goex", "greet (with Icons)", true))
	fmt.Println(mcptools.ToolName("github", "search_issues", false))
	// Output:
	// github_search_issues false
	// goex_greet_with_Icons true
	// search_issues false
}
