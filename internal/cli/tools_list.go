package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/toolset"
)

// toolJSON is one element of `antler tools list --json` (README.md, "Using it"). The
// field set and order are stable; new fields are only ever added.
type toolJSON struct {
	Name        string          `json:"name"`
	Source      toolset.Source  `json:"source"`
	Group       string          `json:"group"`
	Deferred    bool            `json:"deferred"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Policy is the tool_policy action for the tool's calls (allow, ask or
	// deny) and PolicyVaries says that command or agent rules decide some
	// calls otherwise; both absent when the config sets no policy.
	Policy       string `json:"policy,omitempty"`
	PolicyVaries bool   `json:"policy_varies,omitempty"`
}

func newToolsListCmd(g *globals) *cobra.Command {
	var (
		af     assemblyFlags
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "list",
		Short: "Print the assembled tool list, in bound order",
		Long: `Print the tools a run would bind, in bound order: config tools, built-ins,
MCP tools, the ACP tool, de-duplicated by name (first wins).

With --json, print an array of {"name", "source": "config|builtin|mcp|acp",
"group", "deferred", "description", "input_schema"}, and, when the config
sets a tool_policy, "policy" (allow, ask or deny by the tool's labels) and
"policy_varies" (command or agent rules decide some calls otherwise); the
table then has a POLICY column.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			g.skipBrokenTools = true
			a, err := newApp(c.Context(), g)
			if err != nil {
				return err
			}
			defer a.Close()
			a.writeIgnored(a.stderr)
			ts, err := a.toolsFor(c.Context(), &af, "")
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeToolsJSON(a, ts); err != nil {
					return err
				}
			} else {
				writeToolsTable(a, ts)
			}
			// The other tools are listed; the broken ones make it a
			// config error (exit 2), since a run would not start.
			return a.brokenToolsError(a.assembler)
		},
	}
	af.register(c.Flags())
	c.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	return c
}

func writeToolsJSON(a *app, ts *toolset.Toolset) error {
	out := make([]toolJSON, 0, len(ts.Entries))
	policy := listPolicy(a)
	for _, e := range ts.Entries {
		schema := e.Tool.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		out = append(out, toolJSON{
			Name: e.Tool.Name, Source: e.Source, Group: e.Group, Deferred: e.Deferred,
			Description: e.Tool.Description, InputSchema: schema,
		})
		out[len(out)-1].Policy, out[len(out)-1].PolicyVaries = policyOf(policy, e)
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeToolsTable(a *app, ts *toolset.Toolset) {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	policy := listPolicy(a)
	if policy != nil {
		fmt.Fprintln(tw, "NAME\tSOURCE\tGROUP\tDEFERRED\tPOLICY\tDESCRIPTION")
	} else {
		fmt.Fprintln(tw, "NAME\tSOURCE\tGROUP\tDEFERRED\tDESCRIPTION")
	}
	for _, e := range ts.Entries {
		deferred := "-"
		if e.Deferred {
			deferred = "yes"
		}
		if policy != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Tool.Name, e.Source, e.Group, deferred, policyCell(policy, e), summary(e.Tool.Description, 60))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Tool.Name, e.Source, e.Group, deferred, summary(e.Tool.Description, 60))
	}
	tw.Flush()
}

// summary returns the first line of s, cut to n runes.
func summary(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}
