package toolpolicy

import (
	"encoding/json"
	"strings"

	"github.com/antlerhq/antler/shellcmd"
)

// commandLine parses the "command" argument of a bash call. A missing or
// non-string command, a line that does not parse and a line beyond the
// parser's limits all come back as one Dynamic command: what would run
// cannot be read from them.
func commandLine(args json.RawMessage) []shellcmd.Command {
	var in struct {
		Command *string `json:"command"`
	}
	if json.Unmarshal(args, &in) != nil || in.Command == nil {
		return []shellcmd.Command{{Dynamic: true}}
	}
	l := shellcmd.Parse(*in.Command)
	if l.Err != nil {
		return append(l.Commands, shellcmd.Command{Words: []string{*in.Command}, Dynamic: true})
	}
	return l.Commands
}

// decideCommands applies the command rules to every command of a line. A
// deny or ask rule matches when it matches any command, by its words as
// written or with the command's directory dropped (/bin/rm is rm); a
// Dynamic command matches every deny and ask rule, since it cannot be
// proven safe. Allow rules match the words as written, never a Dynamic
// command, and allow the line only when every command of it is allowed
// by some allow rule.
func decideCommands(found *verdicts, rules []*rule, cmds []shellcmd.Command) {
	var firstAllow *rule
	var firstAllowed string
	allAllowed := len(cmds) > 0
	for _, c := range cmds {
		text := strings.Join(c.Words, " ")
		bare := text
		if len(c.Words) > 0 {
			bare = strings.Join(append([]string{baseName(c.Words[0])}, c.Words[1:]...), " ")
		}
		allowed := false
		for _, r := range rules {
			switch r.action {
			case ActionAllow:
				if !c.Dynamic && r.command.match(text) {
					allowed = true
					if firstAllow == nil {
						firstAllow, firstAllowed = r, text
					}
				}
			default:
				if c.Dynamic || r.command.match(text) || r.command.match(bare) {
					found.add(r, text)
				}
			}
		}
		allAllowed = allAllowed && allowed
	}
	if allAllowed && firstAllow != nil {
		found.add(firstAllow, firstAllowed)
	}
}

func baseName(word string) string { return word[strings.LastIndexByte(word, '/')+1:] }
