package cli

import (
	"github.com/spf13/cobra"
)

// completionShells are the shells `antler completion` writes scripts for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

func newCompletionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script for bash, zsh, fish or PowerShell",
		Long: `Print a script that makes the shell complete antler's commands, flags and
MCP server names (antler mcp get|remove|enable|disable). Load it:

  bash:        source <(antler completion bash)
               (needs the bash-completion package; to keep it, write it
               to /etc/bash_completion.d/antler)
  zsh:         antler completion zsh > "${fpath[1]}/_antler"
               (with "autoload -U compinit; compinit" in ~/.zshrc)
  fish:        antler completion fish > ~/.config/fish/completions/antler.fish
  PowerShell:  antler completion powershell | Out-String | Invoke-Expression`,
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs: completionShells,
		RunE: func(c *cobra.Command, args []string) error {
			root, w := c.Root(), c.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, true)
			default:
				return root.GenPowerShellCompletionWithDesc(w)
			}
		},
	}
}
