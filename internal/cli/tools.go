package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/antlerhq/antler/toolset"
)

func newToolsCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "tools",
		Short: "List, search and call the tools an agent would bind",
		Args:  groupArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newToolsListCmd(g), newToolsCallCmd(g), newToolsSearchCmd(g))
	return c
}

// assemblyFlags are the flags that select what a run's tool list holds
// (`tools list`, `tools call`, `tools search`).
type assemblyFlags struct {
	model     string
	groups    string
	subagents bool
	noMCP     bool
	agent     string
	bootstrap bool
	fs        *pflag.FlagSet
}

func (f *assemblyFlags) register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.model, "model", "", "model name (decides view_image); default the first configured model")
	fs.StringVar(&f.groups, "groups", "", "comma-separated config tool groups to keep; \"\" keeps none; unset keeps all")
	fs.BoolVar(&f.subagents, "subagents", false, "include the task tool")
	fs.BoolVar(&f.noMCP, "no-mcp", false, "leave out MCP tools")
	fs.StringVar(&f.agent, "agent", "", "custom agent name (its tool_groups apply; adds update_agent)")
	fs.BoolVar(&f.bootstrap, "bootstrap", false, "bootstrap run (adds setup_agent)")
}

// groupList returns nil when --groups was not given, an empty list when
// it was given empty.
func (f *assemblyFlags) groupList() []string {
	if f.fs == nil || !f.fs.Changed("groups") {
		return nil
	}
	out := []string{}
	for _, g := range strings.Split(f.groups, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

func (f *assemblyFlags) options() toolset.Options {
	return toolset.Options{
		Groups:          f.groupList(),
		IncludeMCP:      !f.noMCP,
		ModelName:       f.model,
		SubagentEnabled: f.subagents,
	}
}

// assemble builds, with asm, the tool list a run with these flags would
// bind (toolsWith has already refused a --model that names no model).
func (a *app) assemble(ctx context.Context, asm *toolset.Assembler, f *assemblyFlags) (*toolset.Toolset, error) {
	opts := f.options()
	opts.User = a.g.user // the user's own MCP servers and credentials too
	return asm.Assemble(ctx, opts)
}
