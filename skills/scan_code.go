package skills

import (
	"regexp"
	"slices"
	"strings"
)

// Python and shell rules. DeerFlow reads Python through its AST; Antler
// has no Python parser, so these rules read comment-stripped source with
// import aliases resolved, which covers the same call shapes
// (docs/differences.md, "Skills").

var (
	pyImportRE     = regexp.MustCompile(`(?m)^[ \t]*import[ \t]+([\w., \t]+)$`)
	pyFromImportRE = regexp.MustCompile(`(?m)^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w, \t]+)\)?`)
	pyCallRE       = regexp.MustCompile(`(?:^|[^\w.])([A-Za-z_]\w*(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*)[ \t]*\(`)
	pyShellKwRE    = regexp.MustCompile(`\bshell\s*=\s*([^,)\s]+)`)
	pyEnvBulkRE    = regexp.MustCompile(`\bos\s*\.\s*environ\b\s*(\[|\.\s*(?:get|setdefault|pop|__getitem__|__contains__)\s*\()?`)
	pyCompileExec  = regexp.MustCompile(`["']exec["']`)
)

var pyNetworkSinks = []string{
	"requests.get", "requests.post", "requests.put", "requests.patch", "requests.delete", "requests.head",
	"requests.options", "requests.request", "requests.Session", "httpx.get", "httpx.post", "httpx.put",
	"httpx.patch", "httpx.delete", "httpx.head", "httpx.options", "httpx.request", "httpx.stream",
	"httpx.Client", "httpx.AsyncClient", "urllib.request.urlopen", "urllib.request.urlretrieve",
	"urllib.request.Request", "socket.socket", "socket.create_connection", "http.client.HTTPConnection",
	"http.client.HTTPSConnection", "aiohttp.ClientSession", "urllib3.PoolManager", "smtplib.SMTP",
	"smtplib.SMTP_SSL", "ftplib.FTP",
}

// stripHashComments blanks "#" comments outside quotes, keeping line
// structure (and byte offsets) intact.
func stripHashComments(text string, wordStartOnly bool) string {
	b := []byte(text)
	inSingle, inDouble, inComment := false, false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\n' {
			inSingle, inDouble, inComment = false, false, false
			continue
		}
		switch {
		case inComment:
			b[i] = ' '
		case c == '\\' && (inDouble || !inSingle):
			i++
		case inSingle:
			inSingle = c != '\''
		case inDouble:
			inDouble = c != '"'
		case c == '\'':
			inSingle = true
		case c == '"':
			inDouble = true
		case c == '#' && (!wordStartOnly || i == 0 || strings.IndexByte(" \t;&|()<>\n", b[i-1]) >= 0):
			inComment = true
			b[i] = ' '
		}
	}
	return string(b)
}

// pyAliases maps local names to the module paths they import.
func pyAliases(code string) map[string]string {
	al := map[string]string{}
	for _, m := range pyImportRE.FindAllStringSubmatch(code, -1) {
		for _, part := range strings.Split(m[1], ",") {
			f := strings.Fields(part)
			switch {
			case len(f) == 3 && f[1] == "as":
				al[f[2]] = f[0]
			case len(f) == 1:
				head, _, _ := strings.Cut(f[0], ".")
				al[head] = head
			}
		}
	}
	for _, m := range pyFromImportRE.FindAllStringSubmatch(code, -1) {
		for _, part := range strings.Split(m[2], ",") {
			f := strings.Fields(part)
			switch {
			case len(f) == 3 && f[1] == "as":
				al[f[2]] = m[1] + "." + f[0]
			case len(f) == 1:
				al[f[0]] = m[1] + "." + f[0]
			}
		}
	}
	return al
}

func resolvePy(name string, al map[string]string) string {
	name = strings.Join(strings.Fields(name), "")
	head, rest, dotted := strings.Cut(name, ".")
	if target, ok := al[head]; ok {
		head = target
	}
	if dotted {
		return head + "." + rest
	}
	return head
}

// callArgs returns the argument text of the call whose "(" is at open,
// up to the matching ")" (bounded).
func callArgs(code string, open int) string {
	depth := 0
	end := min(len(code), open+4000)
	for i := open; i < end; i++ {
		switch code[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return code[open+1 : i]
			}
		}
	}
	return code[open+1 : end]
}

func scanPython(name, text string) []Finding {
	code := stripHashComments(text, false)
	al := pyAliases(code)
	var out []Finding
	var sensitiveAt, envAt, networkAt, dup2At = -1, -1, -1, -1
	var hasSocket, hasSpawn bool
	for _, m := range pyCallRE.FindAllStringSubmatchIndex(code, -1) {
		start := m[2]
		if before := strings.TrimRight(code[max(0, start-8):start], " \t"); strings.HasSuffix(before, "def") || strings.HasSuffix(before, "class") {
			continue
		}
		call := resolvePy(code[m[2]:m[3]], al)
		args := callArgs(code, m[1]-1)
		line := lineAt(text, start)
		switch {
		case call == "eval" || call == "exec" || (call == "compile" && pyCompileExec.MatchString(args)):
			out = append(out, newFinding("python-dynamic-exec", name, line, call))
		case call == "os.system" || call == "os.popen" || (strings.HasPrefix(call, "subprocess.") && pyShellMayBeTrue(args)):
			out = append(out, newFinding("python-shell-exec", name, line, call))
		case strings.HasPrefix(call, "subprocess.") && call != "subprocess.PIPE":
			out = append(out, newFinding("python-subprocess", name, line, call))
		case call == "__import__" || call == "importlib.import_module":
			if a := strings.TrimSpace(args); a == "" || !strings.ContainsAny(a[:1], `"'`) {
				out = append(out, newFinding("python-dynamic-import", name, line, call))
			}
		case call == "pickle.load" || call == "pickle.loads" || call == "marshal.loads" || call == "dill.loads" ||
			(call == "yaml.load" && !strings.Contains(args, "SafeLoader")):
			out = append(out, newFinding("python-unsafe-deserialization", name, line, call))
		}
		if slices.Contains(pyNetworkSinks, call) && networkAt < 0 {
			networkAt = start
		}
		switch {
		case call == "os.dup2" && dup2At < 0:
			dup2At = start
		case call == "socket.socket" || call == "socket.create_connection":
			hasSocket = true
		case strings.HasPrefix(call, "subprocess.") || call == "os.system" || call == "os.popen" || call == "pty.spawn" || strings.HasPrefix(call, "os.exec"):
			hasSpawn = true
		}
	}
	if loc := sensitivePathRE.FindStringIndex(code); loc != nil {
		sensitiveAt = loc[0]
	}
	for _, loc := range urlRE.FindAllStringIndex(code, -1) {
		if h := httpHost(code[loc[0]:loc[1]]); h != "" && !slices.Contains(localHosts, h) {
			if networkAt < 0 {
				networkAt = loc[0]
			}
			break
		}
	}
	for _, m := range pyEnvBulkRE.FindAllStringSubmatchIndex(code, -1) {
		if m[2] < 0 { // os.environ used as a whole, not one variable
			envAt = m[0]
			break
		}
	}
	if dup2At >= 0 && hasSocket && hasSpawn {
		out = append(out, newFinding("python-reverse-shell", name, lineAt(text, dup2At), "socket + dup2 + subprocess"))
	}
	switch {
	case sensitiveAt >= 0 && networkAt >= 0:
		out = append(out, newFinding("python-sensitive-exfil", name, lineAt(text, sensitiveAt), "sensitive read + network sink"))
	case sensitiveAt >= 0:
		out = append(out, newFinding("python-sensitive-path-read", name, lineAt(text, sensitiveAt), "sensitive path read"))
	}
	if envAt >= 0 && networkAt >= 0 {
		out = append(out, newFinding("python-env-dump-exfil", name, lineAt(text, envAt), "environment dump + network sink"))
	}
	return out
}

// pyShellMayBeTrue fails closed: shell= is safe only as a literal False,
// and a **kwargs spread might carry shell=True.
func pyShellMayBeTrue(args string) bool {
	if strings.Contains(args, "**") {
		return true
	}
	m := pyShellKwRE.FindStringSubmatch(args)
	return m != nil && m[1] != "False"
}

var (
	shReverseRE   = regexp.MustCompile(`/dev/tcp/|/dev/udp/|\bnc(?:at)?\s+(?:-\S+\s+)*-e\b|\bsocat\b[^\n]*\bexec:`)
	shHeuristicRE = regexp.MustCompile(`\bbash\s+-i\b|\bmkfifo\s+`)
	shSensitiveRE = regexp.MustCompile(`/etc/shadow|/etc/passwd|~/\.ssh|\$HOME/\.ssh`)
	shTransferRE  = regexp.MustCompile(`\b(?:curl|wget|nc|scp|rsync|ftp)\b`)
	shPipeShellRE = regexp.MustCompile(`\b(?:curl|wget)\b[^|;\n]*\|\s*(?:sudo\s+(?:-\S+\s+(?:[^-\s|;]\S*\s+)?)*)?(?:/usr/(?:local/)?bin/|/bin/)?(?:bash|zsh|dash|fish|sh)\b`)
	shDestroyRE   = regexp.MustCompile(`(?m)\brm\s+(?:-\S+\s+|--no-preserve-root\s+)*-\S*[rR]\S*\s+(?:-\S+\s+|--no-preserve-root\s+)*/(?:\*|\s|$|(?:bin|boot|dev|etc|home|lib|lib64|opt|proc|root|run|sbin|srv|sys|usr|var)(?:/\*?)?(?:\s|$))|\bdd\s+[^#\n]*\bof=/dev/[sh]d|\bmkfs(?:\.\w+)?\s+/dev/`)
	shEnvDumpRE   = regexp.MustCompile("(?m)(?:^|[;&|()`]|\\{[ \\t]|(?:^|[^\\w/.-])(?:if|then|elif|else|while|until|do|exec)[ \\t]+)[ \\t]*(?:[A-Za-z_]\\w*=[^ \\t]*[ \\t]+)*(env|printenv|export[ \\t]+-p)(?:[ \\t]+-\\S+)*[ \\t]*(?:$|[;|&>)])")
	heredocHeadRE = regexp.MustCompile(`<<(-?)[ \t]*(["']?)([A-Za-z_]\w*)["']?`)
)

// shellCode blanks comments and heredoc bodies and joins backslash
// continuations, keeping byte offsets so that lines stay right.
func shellCode(text string) string {
	code := stripHashComments(text, true)
	code = strings.ReplaceAll(code, "\\\n", "  ")
	lines := strings.SplitAfter(code, "\n")
	var pending []string
	for i, l := range lines {
		if len(pending) > 0 {
			if strings.TrimLeft(strings.TrimRight(l, "\n"), "\t") == pending[0] {
				pending = pending[1:]
			}
			lines[i] = strings.Repeat(" ", len(strings.TrimRight(l, "\n"))) + l[len(strings.TrimRight(l, "\n")):]
			continue
		}
		for _, m := range heredocHeadRE.FindAllStringSubmatch(l, -1) {
			pending = append(pending, m[3])
		}
	}
	return strings.Join(lines, "")
}

func scanShell(name, text string) []Finding {
	code := shellCode(text)
	var out []Finding
	if f, ok := match("shell-reverse-shell", name, code, shReverseRE); ok {
		out = append(out, f)
	}
	if f, ok := match("shell-reverse-shell-heuristic", name, code, shHeuristicRE); ok {
		out = append(out, f)
	}
	if loc := shSensitiveRE.FindStringIndex(code); loc != nil && shTransferRE.MatchString(code) {
		out = append(out, newFinding("shell-sensitive-exfil", name, lineAt(code, loc[0]), code[loc[0]:loc[1]]))
	}
	if f, ok := match("shell-curl-pipe-shell", name, code, shPipeShellRE); ok {
		out = append(out, f)
	}
	if f, ok := match("shell-destructive-command", name, code, shDestroyRE); ok {
		out = append(out, f)
	} else if f, ok := match("shell-destructive-command", name, code, forkBombRE); ok {
		out = append(out, f)
	}
	if m := shEnvDumpRE.FindStringSubmatchIndex(code); m != nil {
		out = append(out, newFinding("shell-env-dump", name, lineAt(code, m[2]), code[m[2]:m[3]]))
	}
	for i := range out {
		out[i].Evidence = strings.TrimSpace(out[i].Evidence)
	}
	return out
}
