package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

func newToolsSearchCmd(g *globals) *cobra.Command {
	var (
		af     assemblyFlags
		asJSON bool
		limit  int
	)
	c := &cobra.Command{
		Use:   "search [flags] QUERY",
		Short: "Run tool_search over the deferred MCP catalogue",
		Long: `Search the deferred MCP tools as the model's tool_search would: "select:a,b"
picks exact names, "+kw rest" requires kw in the name and ranks by the rest,
anything else is a ranked search (at most tool_search.max_results results).
When deferral is off, the search runs over all MCP tools.

With --json, print the array of function definitions tool_search returns.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			g.skipBrokenTools = true
			a, err := newApp(c.Context(), g)
			if err != nil {
				return err
			}
			defer a.Close()
			ts, err := a.toolsFor(c.Context(), &af, "")
			if err != nil {
				return err
			}
			_ = a.brokenTools(a.assembler, "")
			var mcp []*tool.Tool
			for _, e := range ts.Entries {
				if e.Source == toolset.SourceMCP {
					mcp = append(mcp, e.Tool)
				}
			}
			if limit <= 0 {
				limit = a.cfg.ToolSearch.MaxResults
			}
			query := strings.Join(args, " ")
			if len(mcp) == 0 {
				// Nothing can match: say why rather than "no match".
				why := "No MCP tools to search: " + a.noMCPReason(&af)
				if asJSON {
					fmt.Fprintln(a.stderr, why)
					_, err := fmt.Fprintln(a.stdout, "[]")
					return err
				}
				_, err := fmt.Fprintln(a.stdout, why)
				return err
			}
			// The catalogue as runs see it: with hybrid search, once its
			// vectors are there (bounded by the build timeout).
			catalog := a.catalogs.Catalog(mcp)
			if a.hybrid != nil {
				a.hybrid.Wait(c.Context(), catalog)
			}
			found := catalog.SearchContext(c.Context(), query, limit)
			if asJSON {
				defs := json.RawMessage(deferred.FunctionDefinitions(found))
				if len(found) == 0 {
					defs = json.RawMessage("[]")
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(defs)
			}
			if len(found) == 0 {
				fmt.Fprintf(a.stdout, "No tools found matching: %s\n", query)
				return nil
			}
			for _, t := range found {
				fmt.Fprintf(a.stdout, "%s\t%s\n", t.Name, summary(t.Description, 80))
			}
			return nil
		},
	}
	af.register(c.Flags())
	c.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	c.Flags().IntVar(&limit, "limit", 0, "maximum ranked results (default tool_search.max_results)")
	return c
}

// noMCPReason says why a tool list has no MCP tool: --no-mcp, no
// extensions file, no server, every server disabled, or every server
// failed (each with its reason).
func (a *app) noMCPReason(af *assemblyFlags) string {
	if af.noMCP {
		return "--no-mcp leaves them out"
	}
	if a.paths.Extensions == "" {
		return "no extensions_config.json beside " + a.paths.Config + " (add a server with antler mcp add, or pass --extensions)"
	}
	ext, _, err := a.extensionsSource().Get()
	if ext == nil {
		return fmt.Sprintf("%s does not load: %v", a.paths.Extensions, err)
	}
	if len(ext.MCPServers) == 0 {
		return a.paths.Extensions + " has no mcpServers (add one with antler mcp add)"
	}
	if len(ext.EnabledServers()) == 0 {
		return "every server in " + a.paths.Extensions + " is disabled (antler mcp enable NAME)"
	}
	var failed []string
	for _, st := range a.mcp.Status() {
		if st.Err != nil {
			failed = append(failed, st.Name+": "+firstLine(st.Err.Error()))
		}
	}
	if len(failed) > 0 {
		return "no MCP server connected (" + strings.Join(failed, "; ") + "); antler mcp list shows each server's state"
	}
	return "the enabled MCP servers list no tools (antler mcp list)"
}
