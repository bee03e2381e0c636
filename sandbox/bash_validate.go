package sandbox

import (
	"regexp"
	"slices"
	"strings"

	"github.com/antlerhq/antler/shellcmd"
	"github.com/antlerhq/antler/vpath"
)

// The checks in this file are DeerFlow's best-effort guard for host bash.
// They are not a security boundary (a shell can always build a path at
// run time); they stop the obvious mistakes and escapes of a model that
// runs commands on a trusted host.

var (
	fileURLPattern   = regexp.MustCompile(`(?i)\bfile://\S+`)
	urlInCommand     = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s"'` + "`" + `;&|<>()]+`)
	urlWithScheme    = regexp.MustCompile(`(?i)^[a-z][a-z0-9+.-]*://`)
	dotdotSegment    = regexp.MustCompile(`(?:^|[/\\=])\.\.(?:$|[/\\])`)
	cdInSubstitution = regexp.MustCompile(`\$\([^)]*\b(?:cd|pushd)\b`)
	identifierBraces = regexp.MustCompile(`\{([^{}]*)\}`)
	identifier       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	assignment       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
)

// systemPathPrefixes are host paths commands may name (executables and
// devices such as /bin/sh and /dev/null).
var systemPathPrefixes = []string{"/bin/", "/usr/bin/", "/usr/sbin/", "/sbin/", "/opt/homebrew/bin/", "/dev/"}

var (
	cwdCommands      = map[string]bool{"cd": true, "pushd": true}
	commandWrappers  = map[string]bool{"command": true, "builtin": true}
	prefixKeywords   = map[string]bool{"!": true, "{": true, "case": true, "do": true, "elif": true, "else": true, "for": true, "if": true, "select": true, "then": true, "time": true, "until": true, "while": true}
	endKeywords      = map[string]bool{"}": true, "done": true, "esac": true, "fi": true}
	rootPathCommands = map[string]bool{"awk": true, "cat": true, "cp": true, "du": true, "find": true, "grep": true, "head": true, "less": true, "ln": true, "ls": true, "more": true, "mv": true, "rm": true, "sed": true, "tail": true, "tar": true}
	separators       = map[string]bool{";": true, "&&": true, "||": true, "|": true, "|&": true, "&": true, "(": true, ")": true}
	redirections     = map[string]bool{"<": true, ">": true, "<<": true, ">>": true, "<<<": true, "<>": true, ">&": true, "<&": true, "&>": true, "&>>": true, ">|": true}
)

// commandError is a refused command; its text follows "Error: ".
type commandError string

func (e commandError) Error() string { return string(e) }

func useUserData() string { return ". Use paths under " + vpath.UserData }

// validateCommand checks a host-bash command against the thread's roots.
// allowed are extra absolute prefixes (none today; DeerFlow adds the
// directories of an enabled filesystem MCP server).
func validateCommand(l *vpath.Layout, command string, allowed []string) error {
	if m := fileURLPattern.FindString(command); m != "" {
		return commandError("Unsafe file:// URL in command: " + m + useUserData())
	}
	line := shellcmd.Parse(command)
	if err := validateShellTokens(l, command, line, allowed); err != nil {
		return err
	}
	urlSpans := nonFileURLSpans(command)
	var unsafe []string
	for _, span := range absolutePathSpans(command) {
		if inSpans(span[0], urlSpans) {
			continue
		}
		p := command[span[0]:span[1]]
		if nonPathLiteral(p) {
			continue
		}
		ok, err := allowedAbsolute(l, p, allowed, true)
		if err != nil {
			return err
		}
		if !ok {
			unsafe = append(unsafe, p)
		}
	}
	if line.Err == nil {
		words, err := unsafeWords(l, line.Commands, allowed)
		if err != nil {
			return err
		}
		unsafe = append(unsafe, words...)
	}
	if len(unsafe) > 0 {
		slices.Sort(unsafe)
		unsafe = slices.Compact(unsafe)
		return commandError("Unsafe absolute paths in command: " + strings.Join(unsafe, ", ") + useUserData())
	}
	return nil
}

// absolutePathSpans finds "/..." runs that start a path: the slash is not
// preceded by ':' or a word character (so URLs and a/b are skipped) and
// the run ends at whitespace, a quote or a shell operator.
func absolutePathSpans(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); i++ {
		if s[i] != '/' {
			continue
		}
		if i > 0 && (s[i-1] == ':' || isWordByte(s[i-1])) {
			continue
		}
		if i > 1 && s[i-1] == '/' && s[i-2] == ':' {
			continue
		}
		j := i + 1
		for j < len(s) && !strings.ContainsRune(" \t\n\r\f\v\"'`;&|<>()", rune(s[j])) {
			j++
		}
		if j > i+1 {
			out = append(out, [2]int{i, j})
		}
		i = j - 1
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func nonFileURLSpans(s string) [][2]int {
	var out [][2]int
	for _, m := range urlInCommand.FindAllStringIndex(s, -1) {
		if !strings.HasPrefix(strings.ToLower(s[m[0]:m[1]]), "file://") {
			out = append(out, [2]int{m[0], m[1]})
		}
	}
	return out
}

func inSpans(pos int, spans [][2]int) bool {
	for _, sp := range spans {
		if pos >= sp[0] && pos < sp[1] {
			return true
		}
	}
	return false
}

// nonPathLiteral reports whether a "/..." run is text rather than a host
// path: non-ASCII, or braces that are only {identifier} placeholders
// (REST templates, f-strings). Shell brace expansion such as
// /etc/{passwd,shadow} and ${VAR} are paths.
func nonPathLiteral(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] >= 0x80 {
			return true
		}
	}
	if !strings.ContainsAny(p, "{}") {
		return false
	}
	if strings.Contains(p, "${") {
		return false
	}
	blocks := identifierBraces.FindAllStringSubmatch(p, -1)
	if strings.Count(p, "{") != len(blocks) || strings.Count(p, "}") != len(blocks) {
		return false
	}
	for _, b := range blocks {
		if !identifier.MatchString(b[1]) {
			return false
		}
	}
	return true
}

// allowedAbsolute reports whether an absolute path in a command is under a
// root of the layout (or allowed, or a system path when allowSystem).
func allowedAbsolute(l *vpath.Layout, p string, allowed []string, allowSystem bool) (bool, error) {
	roots := []string{vpath.UserData, l.SkillsContainerPath(), vpath.ACPWorkspace}
	for _, m := range l.Mounts() {
		roots = append(roots, m.ContainerPath)
	}
	for _, a := range allowed {
		roots = append(roots, strings.TrimSuffix(a, "/"))
	}
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			if hasDotDot(p) {
				return false, commandError(vpath.TraversalMessage)
			}
			return true, nil
		}
	}
	if allowSystem {
		for _, pre := range systemPathPrefixes {
			if p == strings.TrimSuffix(pre, "/") || strings.HasPrefix(p, pre) {
				return true, nil
			}
		}
	}
	return false, nil
}

func hasDotDot(p string) bool {
	for _, seg := range strings.Split(strings.ReplaceAll(p, "\\", "/"), "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// validateShellTokens rejects relative escapes the absolute-path scan
// misses: ".." segments, cd/pushd to unsafe targets, and "/" given to
// common file commands. The commands come from the shell parser
// (bash_commands.go); the token walk below reads a line it cannot parse.
func validateShellTokens(l *vpath.Layout, command string, line shellcmd.Line, allowed []string) error {
	if cdInSubstitution.MatchString(command) {
		return commandError("Unsafe working directory change in command substitution" + useUserData())
	}
	tokens := shellTokens(command)
	for _, tok := range tokens {
		if separators[tok] || redirections[tok] {
			continue
		}
		if !isURLToken(tok) && dotdotSegment.MatchString(tok) {
			return commandError(vpath.TraversalMessage)
		}
	}
	if line.Err == nil {
		return checkCommands(l, line.Commands, allowed)
	}
	atStart := true
	for i := 0; i < len(tokens); {
		tok := tokens[i]
		switch {
		case separators[tok]:
			atStart = true
			i++
			continue
		case redirections[tok]:
			i++
			continue
		case atStart && assignment.MatchString(tok):
			i++
			continue
		}
		name := tok[strings.LastIndexByte(tok, '/')+1:]
		if atStart && (prefixKeywords[name] || endKeywords[name]) {
			i++
			continue
		}
		if !atStart {
			i++
			continue
		}
		atStart = false
		if commandWrappers[name] && i+1 < len(tokens) {
			wrapped := tokens[i+1][strings.LastIndexByte(tokens[i+1], '/')+1:]
			if cwdCommands[wrapped] {
				target, next := cdTarget(tokens, i+2)
				if err := checkCdTarget(l, wrapped, target, allowed); err != nil {
					return err
				}
				i = next
				continue
			}
			if err := checkRootArgs(wrapped, tokens, i+2); err != nil {
				return err
			}
		}
		if !cwdCommands[name] {
			if err := checkRootArgs(name, tokens, i+1); err != nil {
				return err
			}
			i++
			continue
		}
		target, next := cdTarget(tokens, i+1)
		if err := checkCdTarget(l, name, target, allowed); err != nil {
			return err
		}
		i = next
	}
	return nil
}

func isURLToken(tok string) bool {
	vals := []string{tok}
	if _, v, ok := strings.Cut(tok, "="); ok {
		vals = append(vals, v)
	}
	for _, v := range vals {
		if urlWithScheme.MatchString(v) && !strings.HasPrefix(strings.ToLower(v), "file://") {
			return true
		}
	}
	return false
}

// cdTarget returns the directory argument of a cd/pushd whose arguments
// start at tokens[i] (nil when there is none) and the index after it.
func cdTarget(tokens []string, i int) (*string, int) {
	for i < len(tokens) {
		tok := tokens[i]
		switch {
		case separators[tok]:
			return nil, i
		case redirections[tok]:
			i += 2
		case tok == "--", tok != "-" && strings.HasPrefix(tok, "-"):
			i++
		default:
			return &tok, i + 1
		}
	}
	return nil, i
}

func checkCdTarget(l *vpath.Layout, name string, target *string, allowed []string) error {
	if target == nil || *target == "-" {
		return commandError("Unsafe working directory change in command: " + name + useUserData())
	}
	t := *target
	bad := commandError("Unsafe working directory change in command: " + name + " " + t + useUserData())
	if strings.HasPrefix(t, "$") || strings.HasPrefix(t, "`") || strings.HasPrefix(t, "~") {
		return bad
	}
	if strings.HasPrefix(t, "/") {
		if hasDotDot(t) {
			return commandError(vpath.TraversalMessage)
		}
		ok, err := allowedAbsolute(l, t, allowed, false)
		if err != nil {
			return err
		}
		if !ok {
			return bad
		}
	}
	return nil
}

func checkRootArgs(name string, tokens []string, i int) error {
	if !rootPathCommands[name] {
		return nil
	}
	for i < len(tokens) {
		tok := tokens[i]
		switch {
		case separators[tok]:
			return nil
		case redirections[tok]:
			i += 2
			continue
		case tok == "/":
			return commandError("Unsafe absolute paths in command: /" + useUserData())
		}
		i++
	}
	return nil
}

// shellTokens splits a command roughly as a POSIX shell would for the
// checks above: quotes group and are removed, backslash escapes, runs of
// the operator characters ;&|<>() form their own tokens, and newlines
// separate commands. It never fails: unbalanced quotes end at the end.
func shellTokens(command string) []string {
	s := strings.NewReplacer("\r\n", " ; ", "\r", " ; ", "\n", " ; ").Replace(command)
	var out []string
	var cur strings.Builder
	inTok := false
	flush := func() {
		if inTok {
			out = append(out, cur.String())
			cur.Reset()
			inTok = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '\'':
			inTok = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
			} else {
				cur.WriteString(s[i+1 : i+1+j])
				i += j + 1
			}
		case c == '"':
			inTok = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\':
			inTok = true
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
		case strings.IndexByte(";&|<>()", c) >= 0:
			flush()
			j := i
			for j < len(s) && strings.IndexByte(";&|<>()", s[j]) >= 0 {
				j++
			}
			out = append(out, s[i:j])
			i = j - 1
		default:
			inTok = true
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}
