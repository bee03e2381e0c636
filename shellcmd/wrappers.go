package shellcmd

import (
	"strings"
)

// wrapper says how to find the command a wrapper runs: the options that
// take a separate argument, how many positional words come before the
// command (timeout's duration, chroot's root), and whether NAME=VALUE
// words are skipped (env).
type wrapper struct {
	withArg     []string
	positionals int
	assigns     bool
}

// wrappers are the commands that run another command given as their
// arguments. The list is documented in docs/design.md, "Bash commands
// through a real shell parser"; shells, eval, source and find -exec are
// handled apart.
func wrappers(name string) (wrapper, bool) {
	switch name {
	case "sudo":
		return wrapper{withArg: []string{"-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U", "-r", "-t",
			"--user", "--group", "--host", "--prompt", "--chdir", "--role", "--type", "--other-user", "--close-from", "--command-timeout"}}, true
	case "doas":
		return wrapper{withArg: []string{"-u", "-C", "-a"}}, true
	case "env":
		return wrapper{withArg: []string{"-u", "-C", "--unset", "--chdir"}, assigns: true}, true
	case "command", "builtin", "nohup", "setsid", "busybox":
		return wrapper{}, true
	case "exec":
		return wrapper{withArg: []string{"-a"}}, true
	case "nice":
		return wrapper{withArg: []string{"-n", "--adjustment"}}, true
	case "watch":
		return wrapper{withArg: []string{"-n", "--interval", "-q", "--equexit"}}, true
	case "timeout":
		return wrapper{withArg: []string{"-s", "-k", "--signal", "--kill-after"}, positionals: 1}, true
	case "time":
		return wrapper{withArg: []string{"-f", "-o", "--format", "--output"}}, true
	case "stdbuf":
		return wrapper{withArg: []string{"-i", "-o", "-e", "--input", "--output", "--error"}}, true
	case "ionice":
		return wrapper{withArg: []string{"-c", "-n", "-p", "-P", "-u", "--class", "--classdata", "--pid", "--pgid", "--uid"}}, true
	case "chroot":
		return wrapper{withArg: []string{"--userspec", "--groups"}, positionals: 1}, true
	case "xargs":
		return wrapper{withArg: []string{"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s",
			"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--max-lines", "--process-slot-var"}}, true
	}
	return wrapper{}, false
}

// isShell reports whether name is a shell whose -c string is a script.
func isShell(name string) bool {
	switch name {
	case "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "rbash":
		return true
	}
	return false
}

// baseName is a command word without its directory (/usr/bin/sudo is
// sudo).
func baseName(word string) string { return word[strings.LastIndexByte(word, '/')+1:] }

// commandStart returns the index in args of the command a wrapper runs
// (len(args) when there is none).
func (wr wrapper) commandStart(args []string) int {
	i := 0
	for i < len(args) {
		a := args[i]
		switch {
		case a == "--":
			i++
			return min(i+wr.positionals, len(args))
		case len(a) > 1 && a[0] == '-':
			if hasString(wr.withArg, a) {
				i++
			}
			i++
		case wr.assigns && (isAssignment(a) || a == "-"): // env's "-" is -i
			i++
		default:
			return min(i+wr.positionals, len(args))
		}
	}
	return i
}

func hasString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// isAssignment reports whether word is NAME=VALUE.
func isAssignment(word string) bool {
	name, _, ok := strings.Cut(word, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// unwrap emits the commands that the wrappers of words run, each after
// the wrapper's own: "sudo env X=1 rm -rf b" adds "env X=1 rm -rf b" and
// "rm -rf b".
func (w *walker) unwrap(words []string, literal []bool, depth int, inSubst bool) {
	for len(words) > 0 && w.err == nil {
		name := baseName(words[0])
		switch {
		case isShell(name):
			w.shell(words, literal, depth, inSubst)
			return
		case name == "eval":
			w.reparse(words, literal, 1, len(words), depth, "eval", inSubst)
			return
		case name == "alias":
			w.aliases(words, literal, depth, inSubst)
			return
		case name == "source" || name == ".":
			w.emit(Command{Words: words, Literal: literal, Dynamic: true, InSubstitution: inSubst, Wrapper: name})
			return
		case name == "find":
			w.find(words, literal, depth, inSubst)
			return
		case name == "env" && splitString(words) >= 0:
			i := splitString(words)
			w.reparse(words, literal, i, i+1, depth, "env -S", inSubst)
			return
		}
		wr, ok := wrappers(name)
		if !ok {
			return
		}
		i := 1 + wr.commandStart(words[1:])
		if i >= len(words) {
			return
		}
		words, literal = words[i:], literal[i:]
		c := Command{Words: words, Literal: literal, InSubstitution: inSubst, Wrapper: name, Dynamic: !literal[0] || strings.ContainsAny(words[0], "*?[{")}
		w.emit(c)
		if c.Dynamic {
			return
		}
	}
}

// aliases parses the value of each NAME=VALUE of an alias definition as
// a script: with expand_aliases on, the alias runs it.
func (w *walker) aliases(words []string, literal []bool, depth int, inSubst bool) {
	for i := 1; i < len(words) && w.err == nil; i++ {
		if _, value, ok := strings.Cut(words[i], "="); ok {
			value := []string{value}
			w.reparse(value, literal[i:i+1], 0, 1, depth, "alias", inSubst)
		}
	}
}

// splitString returns the index of the string of env -S/--split-string
// (-1 for none).
func splitString(words []string) int {
	for i, a := range words[1:] {
		switch {
		case (a == "-S" || a == "--split-string") && i+2 < len(words):
			return i + 2
		case a == "--" || len(a) < 2 || a[0] != '-':
			return -1
		}
	}
	return -1
}

// shell handles bash, sh and the other shells: the string of -c is
// parsed as a script; a shell reading a script file or its standard
// input runs what the line cannot show (Dynamic).
func (w *walker) shell(words []string, literal []bool, depth int, inSubst bool) {
	hasC := false
	for i := 1; i < len(words); i++ {
		a := words[i]
		switch {
		case a == "--":
			continue
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file":
			i++
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			hasC = hasC || a[0] == '-' && strings.ContainsRune(a, 'c')
		case hasC:
			w.reparse(words, literal, i, i+1, depth, baseName(words[0])+" -c", inSubst)
			return
		default:
			w.emit(Command{Words: words, Literal: literal, Dynamic: true, InSubstitution: inSubst, Wrapper: baseName(words[0])})
			return
		}
	}
	if !hasC {
		w.emit(Command{Words: words, Literal: literal, Dynamic: true, InSubstitution: inSubst, Wrapper: baseName(words[0])})
	}
}

// reparse parses words[from:to], the words a wrapper (eval, bash -c,
// env -S) runs as a script of their own, joined by spaces. A word with an
// expansion, or a string nested deeper than maxDepth, makes a Dynamic
// command.
func (w *walker) reparse(words []string, literal []bool, from, to, depth int, wrapperName string, inSubst bool) {
	dynamic := depth+1 > maxDepth
	for _, l := range literal[from:to] {
		dynamic = dynamic || !l
	}
	if dynamic {
		w.emit(Command{Words: words, Literal: literal, Dynamic: true, InSubstitution: inSubst, Wrapper: wrapperName})
		return
	}
	w.parse(strings.Join(words[from:to], " "), depth+1, wrapperName, inSubst)
}

// find emits the command of each -exec, -execdir, -ok and -okdir (up to
// its ";" or "+"), and what those commands wrap.
func (w *walker) find(words []string, literal []bool, depth int, inSubst bool) {
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		start := i + 1
		end := start
		for end < len(words) && words[end] != ";" && words[end] != "+" {
			end++
		}
		if start < end {
			inner, lit := words[start:end], literal[start:end]
			c := Command{Words: inner, Literal: lit, InSubstitution: inSubst, Wrapper: "find", Dynamic: !lit[0] || strings.ContainsAny(inner[0], "*?[{")}
			w.emit(c)
			if !c.Dynamic {
				w.unwrap(inner, lit, depth, inSubst)
			}
		}
		i = end
	}
}
