// Package shellcmd finds every simple command of a shell command line
// with a real shell parser (mvdan.cc/sh/v3, bash dialect): through ";",
// "&&", "||", pipes, subshells, groups, "$(...)", backticks, process
// substitution, here-documents and here-strings, the string of
// "bash -c"/"sh -c" and the arguments of "eval" (parsed again, to a
// bounded depth), and the command that a wrapper such as sudo, env,
// xargs or find -exec runs. The approval policy (package toolpolicy) and
// the host-bash checks of package sandbox both read command lines
// through it, so that quoting, separators and substitutions cannot hide
// a command from either. See docs/design.md, "Bash commands through a
// real shell parser".
package shellcmd

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Limits of one Parse. Every bound is explicit: a model's command line
// cannot make the parser's work or its result grow without end.
const (
	// maxScriptBytes is the longest command line parsed; a longer one is
	// an error (it cannot be proven to hold only known commands).
	maxScriptBytes = 64 << 10
	// maxDepth bounds the nesting of re-parsed strings (bash -c inside
	// eval inside sh -c ...). A string deeper than that is a Dynamic
	// command.
	maxDepth = 4
	// maxCommands bounds the commands of one line, wrapped ones included;
	// a line with more is an error.
	maxCommands = 1024
)

// ErrTooLarge is the error of a line longer than 64 KiB or of more than
// 1024 commands, wrapped ones included.
var ErrTooLarge = errors.New("shellcmd: command line too large to check")

// Command is one simple command of a line.
type Command struct {
	// Words are the command's name and arguments with quotes and
	// backslashes removed ("r''m" is "rm"). A word with an expansion
	// ("$HOME/x", "$(date)") keeps its source text.
	Words []string
	// Literal[i] reports whether Words[i] is a literal word, with no
	// expansion of any kind (it then holds the word's value).
	Literal []bool
	// Dynamic means the command that runs cannot be read from the line:
	// its name is not a literal word ("$X", "$(...)", a glob, a brace
	// expansion), or it is a shell reading a script from a file or from
	// its input ("echo x | sh", "bash run.sh", "source f"), or a string
	// too deep to re-parse.
	Dynamic bool
	// InSubstitution marks a command inside "$(...)", backticks or a
	// process substitution.
	InSubstitution bool
	// Wrapper is the wrapper whose command this is ("sudo", "xargs",
	// "find", "bash -c", "eval"); "" for a command as written.
	Wrapper string
}

// Name returns the command's first word ("" for none).
func (c Command) Name() string {
	if len(c.Words) == 0 {
		return ""
	}
	return c.Words[0]
}

// Line is the result of parsing one command line.
type Line struct {
	// Commands are the simple commands in source order; a wrapper's
	// command follows the wrapper's own.
	Commands []Command
	// Err is set when the line (or a string re-parsed from it) does not
	// parse or exceeds a limit. Commands then holds those found before.
	Err error
}

// Parse returns the commands of a bash command line. It never panics.
func Parse(script string) Line {
	p := &walker{}
	p.parse(script, 0, "", false)
	return Line{Commands: p.out, Err: p.err}
}

type walker struct {
	out []Command
	err error
}

func (w *walker) emit(c Command) {
	if len(w.out) >= maxCommands {
		if w.err == nil {
			w.err = ErrTooLarge
		}
		return
	}
	w.out = append(w.out, c)
}

// parse walks one script (the line itself or a re-parsed string).
func (w *walker) parse(script string, depth int, wrapper string, inSubst bool) {
	if w.err != nil {
		return
	}
	if len(script) > maxScriptBytes {
		w.err = ErrTooLarge
		return
	}
	f, err := parseBash(script)
	if err != nil {
		w.err = fmt.Errorf("shellcmd: %w", err)
		return
	}
	var stack []bool // per node: inside a substitution
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		in := inSubst || len(stack) > 0 && stack[len(stack)-1]
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			in = true
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				w.command(script, n.Args, depth, wrapper, in)
			}
		case *syntax.DeclClause:
			words, literal := []string{n.Variant.Value}, []bool{true}
			for _, a := range n.Args {
				words, literal = append(words, source(script, a)), append(literal, false)
			}
			w.emit(Command{Words: words, Literal: literal, InSubstitution: in, Wrapper: wrapper})
		}
		if w.err != nil {
			return false // no children and no f(nil) for this node
		}
		stack = append(stack, in)
		return true
	})
}

// parseBash parses script in the bash dialect, turning a parser panic
// into an error.
func parseBash(script string) (f *syntax.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("parser failure: %v", r)
		}
	}()
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
}

// command emits one simple command, then what its wrappers run.
func (w *walker) command(script string, args []*syntax.Word, depth int, wrapper string, inSubst bool) {
	words := make([]string, len(args))
	literal := make([]bool, len(args))
	for i, a := range args {
		words[i], literal[i] = wordValue(script, a)
	}
	c := Command{Words: words, Literal: literal, InSubstitution: inSubst, Wrapper: wrapper, Dynamic: !literal[0] || !nameLiteral(args[0])}
	w.emit(c)
	if !c.Dynamic {
		w.unwrap(words, literal, depth, inSubst)
	}
}

// source returns the source text of a node.
func source(script string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(script) || start > end {
		return ""
	}
	return script[start:end]
}
