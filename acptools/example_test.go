package acptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/antlerhq/antler/acptools"
	"github.com/antlerhq/antler/config"
)

func ExampleDescription() {
	cfg := config.Default()
	cfg.ACPAgents = map[string]config.ACPAgent{
		"codex": {Command: "codex-acp", Description: "Codex CLI for coding tasks"},
	}
	desc, _ := acptools.Description(cfg)
	fmt.Println(desc)
	// Output:
	// Invoke an external ACP-compatible agent and return its final response.
	//
	// Available agents:
	// - codex: Codex CLI for coding tasks
	//
	// IMPORTANT: ACP agents operate in their own independent workspace. Do NOT include /mnt/user-data paths in the prompt. Give the agent a self-contained task description — it will produce results in its own workspace. After the agent completes, its output files are accessible at /mnt/acp-workspace/ (read-only).
}

func ExampleMCPServers() {
	ext, _ := config.ParseExtensions("extensions_config.json", []byte(`{"mcpServers": {
		"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"]},
		"search": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer t"}},
		"off": {"command": "unused", "enabled": false}
	}}`), nil)
	servers, err := acptools.MCPServers(ext)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range servers {
		data, _ := json.Marshal(s)
		fmt.Println(string(data))
	}
	// Output:
	// {"args":["-y","@modelcontextprotocol/server-filesystem","/data"],"command":"npx","env":[],"name":"files"}
	// {"headers":[{"name":"Authorization","value":"Bearer t"}],"name":"search","type":"http","url":"https://mcp.example.com/mcp"}
}

// Wiring invoke_acp_agent into the tool assembler: Invoker.Tool has the
// signature of toolset.ACPToolFactory.
func ExampleInvoker_Tool() {
	home, _ := os.MkdirTemp("", "antler-home-")
	defer os.RemoveAll(home)
	inv, err := acptools.New(acptools.Options{
		Home:       home,
		Extensions: func() (*config.Extensions, error) { return config.LoadExtensions("") },
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := config.Default()
	cfg.ACPAgents = map[string]config.ACPAgent{"claude": {Command: "claude-agent-acp", Description: "Claude Code", TimeoutSeconds: 1800}}
	tl, err := inv.Tool(context.Background(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tl.Name)
	// Output: invoke_acp_agent
}
