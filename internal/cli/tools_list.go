package cli

import (
	"encoding/json"
	"strings"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/mcptools"
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
	// Annotations are an MCP tool's title and the hints its server
	// states (readOnlyHint, destructiveHint, idempotentHint,
	// openWorldHint; one left out is absent); absent for other tools.
	Annotations *mcptools.Annotations `json:"annotations,omitempty"`
}

func newToolsListCmd(g *globals) *cobra.Command {
	var (
		af     assemblyFlags
		asJSON bool
		wf     widthFlag
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
table then has a POLICY column. An MCP tool has "annotations": its
"title" and the hints its server states ("readOnlyHint",
"destructiveHint", "idempotentHint", "openWorldHint"; one left out is
absent). The table fits --width columns (default:
the terminal's width, else $COLUMNS, else 80) by cutting descriptions.`,
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
			} else if err := writeToolsTable(a, ts, wf.width(a.stdout, g.opts.Getenv)); err != nil {
				return err
			}
			// The other tools are listed; the broken ones make it a
			// config error (exit 2), since a run would not start.
			return a.brokenToolsError(a.assembler)
		},
	}
	af.register(c.Flags())
	c.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	wf.register(c.Flags())
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
			Description: e.Tool.Description, InputSchema: schema, Annotations: mcptools.AnnotationsOf(e.Tool.Meta),
		})
		out[len(out)-1].Policy, out[len(out)-1].PolicyVaries = policyOf(policy, e)
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeToolsTable writes the tools as a table fitted to width: the
// DESCRIPTION column (each tool's first line) is cut with "…".
func writeToolsTable(a *app, ts *toolset.Toolset, width int) error {
	policy := listPolicy(a)
	t := &table{header: []string{"NAME", "SOURCE", "GROUP", "DEFERRED"}}
	if policy != nil {
		t.header = append(t.header, "POLICY")
	}
	t.header = append(t.header, "DESCRIPTION")
	t.flex = len(t.header) - 1
	for _, e := range ts.Entries {
		deferred := "-"
		if e.Deferred {
			deferred = "yes"
		}
		row := []string{e.Tool.Name, string(e.Source), e.Group, deferred}
		if policy != nil {
			row = append(row, policyCell(policy, e))
		}
		t.add(append(row, summary(e.Tool.Description, maxSummary))...)
	}
	return t.write(a.stdout, width)
}

// maxSummary bounds a description's first line in a table, however wide.
const maxSummary = 200

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
