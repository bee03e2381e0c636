package acptools_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/antlerhq/antler/acptools"
	"github.com/antlerhq/antler/config"
)

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
