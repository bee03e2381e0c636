package sandbox

import (
	"strings"

	"github.com/antlerhq/antler/shellcmd"
	"github.com/antlerhq/antler/vpath"
)

// The checks of this file read a host-bash command line through the shell
// parser of package shellcmd, the one the tool policy uses: every simple
// command, through separators, pipes, subshells, "$(...)", backticks,
// process substitution, "bash -c" strings, eval and wrappers such as
// command, sudo, env and xargs, with quotes and backslashes removed. So
// `c""d /`, `x; cd /`, "`cd /`" and `bash -c 'cd /'` are refused as
// "cd /" is. A line the parser cannot read falls back to the token walk of
// bash_validate.go.

// checkCommands applies the working-directory, root-path and traversal
// checks to every command of a parsed line.
func checkCommands(l *vpath.Layout, cmds []shellcmd.Command, allowed []string) error {
	for _, c := range cmds {
		if err := checkCommand(l, c, allowed); err != nil {
			return err
		}
	}
	return nil
}

func checkCommand(l *vpath.Layout, c shellcmd.Command, allowed []string) error {
	if len(c.Words) == 0 {
		return nil
	}
	for _, w := range c.Words {
		if !isURLToken(w) && dotdotSegment.MatchString(w) {
			return commandError(vpath.TraversalMessage)
		}
	}
	name := baseName(c.Words[0])
	if cwdCommands[name] {
		if c.InSubstitution {
			return commandError("Unsafe working directory change in command substitution" + useUserData())
		}
		return checkParsedCd(l, name, c, allowed)
	}
	if rootPathCommands[name] {
		for _, w := range c.Words[1:] {
			if w == "/" {
				return commandError("Unsafe absolute paths in command: /" + useUserData())
			}
		}
	}
	return nil
}

// checkParsedCd checks the target of a cd or pushd: a word with an
// expansion ($HOME, $(pwd), `pwd`) is refused as unknown, a literal one
// as the token walk checks it.
func checkParsedCd(l *vpath.Layout, name string, c shellcmd.Command, allowed []string) error {
	for i := 1; i < len(c.Words); i++ {
		w := c.Words[i]
		if c.Literal[i] && (w == "--" || w != "-" && strings.HasPrefix(w, "-")) {
			continue
		}
		if !c.Literal[i] {
			return commandError("Unsafe working directory change in command: " + name + " " + w + useUserData())
		}
		return checkCdTarget(l, name, &w, allowed)
	}
	return checkCdTarget(l, name, nil, allowed)
}

// unsafeWords returns the literal words of the parsed commands that are
// absolute host paths outside the allowed roots: what quoting hides from
// the text scan ("/"etc/passwd is /etc/passwd).
func unsafeWords(l *vpath.Layout, cmds []shellcmd.Command, allowed []string) ([]string, error) {
	var unsafe []string
	for _, c := range cmds {
		for i, w := range c.Words {
			if !c.Literal[i] || !strings.HasPrefix(w, "/") || nonPathLiteral(w) || strings.ContainsAny(w, " \t\n") {
				continue
			}
			ok, err := allowedAbsolute(l, w, allowed, true)
			if err != nil {
				return nil, err
			}
			if !ok {
				unsafe = append(unsafe, w)
			}
		}
	}
	return unsafe, nil
}

func baseName(word string) string { return word[strings.LastIndexByte(word, '/')+1:] }
