package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// groupArgs is the Args of a command that only groups subcommands
// (tools, mcp): no argument, and an unknown subcommand is a usage error
// that names the nearest ones, as cobra does for the root command.
func groupArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default for the root
	}
	return usageErrorf("unknown command %q for %q%s", args[0], c.CommandPath(), didYouMean(c.SuggestionsFor(args[0])))
}

func didYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return " (did you mean " + strings.Join(q, " or ") + "?)"
}

// errorLine is err as the one "antler: " line Main prints: line breaks
// become "; ", and cobra's "Did you mean this?" block, which it writes
// for an unknown command of the root, becomes "(did you mean "x"?)".
func errorLine(err error) string {
	msg := strings.TrimSpace(err.Error())
	if head, block, ok := strings.Cut(msg, "\n\nDid you mean this?\n"); ok {
		var names []string
		for _, l := range strings.Split(block, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				names = append(names, l)
			}
		}
		msg = head + didYouMean(names)
	}
	return strings.ReplaceAll(msg, "\n", "; ")
}
