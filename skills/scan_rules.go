package skills

import (
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// rule describes one static scan rule.
type rule struct {
	ID          string
	Severity    Severity
	Message     string
	Remediation string
}

// rules lists every static rule, with DeerFlow's ids, severities and
// texts.
var rules = []rule{
	{"package-path-traversal", SeverityCritical, "Archive member path traverses outside the skill root.", "Remove parent-directory traversal from the package path."},
	{"package-absolute-path", SeverityCritical, "Archive member path is absolute.", "Use relative paths inside the skill archive."},
	{"package-ads-stream-name", SeverityCritical, "Archive member path contains a colon, which on Windows/NTFS addresses an alternate data stream hidden from directory listing.", "Remove colons from archive member paths."},
	{"package-symlink", SeverityHigh, "Package contains a symlink entry.", "Remove symlinks from the skill package."},
	{"package-nested-skill-md", SeverityCritical, "Package contains a nested SKILL.md file.", "Keep exactly one SKILL.md at the skill root."},
	{"package-oversized-total", SeverityCritical, "Package total uncompressed size exceeds the limit.", "Remove large files or split assets out of the skill package."},
	{"package-too-many-members", SeverityCritical, "Package contains more members than the allowed limit.", "Reduce the number of files in the skill package."},
	{"package-oversized-file", SeverityCritical, "Package contains a file that exceeds the per-file size limit.", "Remove or shrink the oversized file."},
	{"package-executable-binary", SeverityCritical, "Package contains an executable binary.", "Remove binary executables from the skill package."},
	{"package-nested-archive", SeverityHigh, "Package contains a nested archive file.", "Unpack and review nested archives before packaging the skill."},
	{"package-hidden-sensitive-file", SeverityHigh, "Package contains a hidden sensitive file.", "Remove hidden credential or package-manager config files."},
	{"package-undecodable-script", SeverityHigh, "Code file is not NUL-free UTF-8 text, so it was analyzed from a lossy decode.", "Store code as UTF-8 text without NUL bytes, and keep compiled or binary artifacts out of scripts/."},
	{"package-git-directory", SeverityMedium, "Package contains a .git directory.", "Package only source files needed by the skill, excluding repository metadata."},
	{"secret-private-key", SeverityCritical, "Private key material is embedded in skill content.", "Move private keys to a managed secret store and remove them from the skill."},
	{"secret-cloud-token", SeverityCritical, "High-confidence cloud or API token is embedded in skill content.", "Move tokens to environment variables or a secret store."},
	{"secret-env-assignment", SeverityHigh, "Secret-like assignment contains a non-placeholder value.", "Replace hardcoded credentials with documented runtime configuration."},
	{"declaration-prompt-override", SeverityHigh, "SKILL.md contains a prompt override phrase.", "Rephrase examples so they describe unsafe text instead of instructing the agent to follow it."},
	{"declaration-sensitive-capability", SeverityHigh, "SKILL.md declares a sensitive capability.", "Make the capability explicit, narrow, and justified, or remove it."},
	{"declaration-sensitive-path", SeverityHigh, "SKILL.md references sensitive host or credential paths.", "Remove references to sensitive host paths unless they are harmless documentation."},
	{"declaration-external-endpoint", SeverityMedium, "SKILL.md declares an external network endpoint.", "Document why the endpoint is needed and prefer HTTPS."},
	{"python-dynamic-exec", SeverityCritical, "Python dynamic code execution primitive is used in a skill file.", "Remove dynamic execution and replace it with explicit typed logic."},
	{"python-shell-exec", SeverityCritical, "Python shell execution primitive is used in a skill file.", "Use subprocess with a fixed argument list and shell=False, or remove shell execution."},
	{"python-sensitive-exfil", SeverityCritical, "Python code reads a sensitive path and uses an outbound network sink in the same file.", "Remove the sensitive read or network sink, and keep credential access outside skills."},
	{"python-env-dump-exfil", SeverityCritical, "Python code reads the process environment in bulk and uses an outbound network sink in the same file.", "Avoid bulk environment reads and never send environment data over the network."},
	{"python-reverse-shell", SeverityCritical, "Python code matches a reverse-shell shape.", "Remove reverse-shell behavior from the skill."},
	{"python-dynamic-import", SeverityHigh, "Python dynamically imports a non-literal module.", "Use explicit imports or a constrained allowlist."},
	{"python-subprocess", SeverityHigh, "Python invokes subprocess without shell=True.", "Review subprocess usage and keep arguments fixed and minimal."},
	{"python-sensitive-path-read", SeverityHigh, "Python reads a sensitive path.", "Remove sensitive host-path access from the skill."},
	{"python-unsafe-deserialization", SeverityMedium, "Python uses unsafe deserialization.", "Use safe loaders or trusted typed formats."},
	{"shell-reverse-shell", SeverityCritical, "Shell script contains a reverse-shell idiom.", "Remove reverse-shell behavior from the skill."},
	{"shell-reverse-shell-heuristic", SeverityHigh, "Shell script resembles a reverse-shell idiom.", "Confirm this is not reverse-shell behavior; unmistakable reverse-shell signals are blocked outright."},
	{"shell-sensitive-exfil", SeverityCritical, "Shell script reads sensitive paths and sends data over the network.", "Remove sensitive reads or outbound transfer commands."},
	{"shell-curl-pipe-shell", SeverityHigh, "Shell script pipes remote content into a shell.", "Download, verify, and execute reviewed code explicitly instead."},
	{"shell-destructive-command", SeverityHigh, "Shell script contains an unmistakably destructive command.", "Remove destructive commands from skill scripts."},
	{"shell-env-dump", SeverityMedium, "Shell script dumps the environment.", "Avoid bulk environment dumps in skills."},
	{"network-cloud-metadata", SeverityCritical, "Skill content references a cloud metadata service.", "Remove cloud metadata access from the skill."},
	{"resource-fork-bomb", SeverityCritical, "Skill content contains a fork-bomb pattern.", "Remove resource-exhaustion payloads."},
	{"network-cleartext-http", SeverityMedium, "Skill content references a non-local cleartext HTTP endpoint.", "Use HTTPS or document why cleartext local development is required."},
	{"network-local-http", SeverityLow, "Skill content references a local HTTP endpoint.", "Confirm the local endpoint is expected for this skill."},
}

func lookupRule(id string) rule {
	i := slices.IndexFunc(rules, func(r rule) bool { return r.ID == id })
	if i < 0 {
		panic("skills: unknown scan rule " + id) // programming error
	}
	return rules[i]
}

// maxEvidence caps the evidence text of a finding, in characters.
const maxEvidence = 200

func newFinding(id, file string, line int, evidence string) Finding {
	r := lookupRule(id)
	if strings.HasPrefix(id, "secret-") {
		// Any retained prefix of a real token would leak it into tool
		// results and the moderation prompt.
		evidence = "[redacted]"
	}
	if utf8.RuneCountInString(evidence) > maxEvidence {
		evidence = string([]rune(evidence)[:maxEvidence]) + "..."
	}
	return Finding{RuleID: id, Severity: r.Severity, File: file, Line: line, Message: r.Message, Remediation: r.Remediation, Evidence: evidence}
}

func lineAt(text string, offset int) int { return strings.Count(text[:max(offset, 0)], "\n") + 1 }

// match returns a finding for the first match of re in text, if any.
func match(id, file, text string, re *regexp.Regexp) (Finding, bool) {
	loc := re.FindStringIndex(text)
	if loc == nil {
		return Finding{}, false
	}
	return newFinding(id, file, lineAt(text, loc[0]), text[loc[0]:loc[1]]), true
}

// textProbeBytes is how much of a file is checked for NUL bytes.
const textProbeBytes = 4096

var codeSuffixes = []string{".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".ps1", ".bat", ".cmd", ".lua"}

// textForAnalysis returns the text the content rules read: the file when
// it is NUL-free UTF-8, a lossy decode (lossy set) for a code file that is
// not, and ok=false for other binary data.
func textForAnalysis(name string, data []byte) (text string, lossy, ok bool) {
	probe := data[:min(len(data), textProbeBytes)]
	if !slices.Contains(probe, 0) && utf8.Valid(data) {
		return string(data), false, true
	}
	if !isCodeFile(name, data) || executableMagic(data) != "" {
		return "", false, false
	}
	return strings.ToValidUTF8(strings.ReplaceAll(string(data), "\x00", "\uFFFD"), "\uFFFD"), true, true
}

func isCodeFile(name string, data []byte) bool {
	ext := strings.ToLower(path.Ext(name))
	return slices.Contains(codeSuffixes, ext) || strings.HasPrefix(string(data[:min(len(data), 2)]), "#!")
}

// textFindings runs the content rules on one decoded file.
func textFindings(name, text string, lossy bool) []Finding {
	var out []Finding
	if lossy {
		out = append(out, newFinding("package-undecodable-script", name, 0, "NUL byte or invalid UTF-8"))
	}
	out = append(out, scanSecrets(name, text)...)
	if path.Base(name) == SkillFile {
		out = append(out, scanDeclaration(name, text)...)
	}
	if isPython(name, text) {
		out = append(out, scanPython(name, text)...)
	}
	if isShell(name, text) {
		out = append(out, scanShell(name, text)...)
	}
	out = append(out, scanNetwork(name, text)...)
	return out
}

func firstLine(text string) string {
	l, _, _ := strings.Cut(text, "\n")
	return strings.ToLower(l)
}

func isPython(name, text string) bool {
	return strings.EqualFold(path.Ext(name), ".py") || (strings.HasPrefix(text, "#!") && strings.Contains(firstLine(text), "python"))
}

func isShell(name, text string) bool {
	ext := strings.ToLower(path.Ext(name))
	if ext == ".sh" || ext == ".bash" || ext == ".zsh" {
		return true
	}
	if !strings.HasPrefix(text, "#!") {
		return false
	}
	l := firstLine(text)
	return !strings.Contains(l, "python") && (strings.Contains(l, "sh") || strings.Contains(l, "bash") || strings.Contains(l, "zsh"))
}

// --- secrets ---

var (
	privateKeyRE  = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----`)
	cloudTokenREs = []*regexp.Regexp{
		regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`),
		regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9_]{20,}\b`),
		regexp.MustCompile(`\bxox[baprs]-[A-Za-z0-9-]{20,}\b`),
		regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}\b`),
		regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`),
	}
	// secretAssignRE finds name[:=]value where name is a credential word
	// not preceded by a letter or digit (so MY_API_KEY counts and
	// "tokenizer" does not).
	secretAssignRE = regexp.MustCompile(`(?im)(?:^|[^A-Za-z0-9])(?:token|password|passwd|api[_-]?key|secret|credential)s?\b["']?\s*[:=]\s*["']?([^"'\s#]+)`)
	// secretAssignPyRE is the Python form: only a quoted literal counts,
	// so that annotations and os.getenv(...) do not.
	secretAssignPyRE = regexp.MustCompile(`(?im)(?:^|[^A-Za-z0-9])(?:token|password|passwd|api[_-]?key|secret|credential)s?["']?\s*(?::[^=\n]*)?[:=]\s*[bfru]?["']([^"'\n]+)["']`)
)

var placeholders = []string{"", "x", "xx", "xxx", "xxxx", "changeme", "change-me", "example", "placeholder", "test", "dummy", "your-key", "<your-key>", "none", "null", "true", "false", "..."}

func looksLikePlaceholder(v string) bool {
	n := strings.ToLower(strings.Trim(strings.TrimSpace(v), `"'`))
	if slices.Contains(placeholders, n) {
		return true
	}
	return strings.HasPrefix(n, "<") || strings.HasPrefix(n, "$") || strings.HasPrefix(n, "{{") ||
		strings.Contains(n, "your") || strings.Contains(n, "example") || strings.Trim(n, "*x.") == ""
}

func scanSecrets(name, text string) []Finding {
	var out []Finding
	if f, ok := match("secret-private-key", name, text, privateKeyRE); ok {
		out = append(out, f)
	}
	for _, re := range cloudTokenREs {
		if loc := re.FindStringIndex(text); loc != nil && !looksLikePlaceholder(text[loc[0]:loc[1]]) {
			out = append(out, newFinding("secret-cloud-token", name, lineAt(text, loc[0]), ""))
			break
		}
	}
	re := secretAssignRE
	if isPython(name, text) {
		re = secretAssignPyRE
	}
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		if !looksLikePlaceholder(text[m[2]:m[3]]) {
			out = append(out, newFinding("secret-env-assignment", name, lineAt(text, m[2]), ""))
			break
		}
	}
	return out
}

// --- SKILL.md declarations ---

var (
	promptOverrideRE = regexp.MustCompile(`(?i)\b(?:ignore|disregard)\s+(?:all\s+)?(?:previous|prior)\s+instructions\b|\boverride\s+(?:the\s+)?(?:system|developer)\s+instructions\b`)
	capabilityRE     = regexp.MustCompile(`(?i)execute\s+(?:arbitrary\s+)?commands?|shell\s+commands?|credential\s+access|read\s+secrets?|arbitrary\s+network|network\s+egress`)
	sensitivePathRE  = regexp.MustCompile(`~/\.ssh|/etc/passwd|/etc/shadow|/var/run/docker\.sock|docker\.sock|169\.254\.169\.254|~/\.aws/credentials|\.kube/config`)
	urlRE            = regexp.MustCompile(`(?i)https?://[^\s)'"<>]+`)
)

var localHosts = []string{"localhost", "127.0.0.1", "0.0.0.0", "::1"}

func httpHost(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return strings.ToLower(p.Hostname())
}

func isPrivateHost(h string) bool {
	if slices.Contains(localHosts, h) || strings.HasSuffix(h, ".localhost") || strings.HasPrefix(h, "127.") ||
		strings.HasPrefix(h, "10.") || strings.HasPrefix(h, "192.168.") {
		return true
	}
	if rest, ok := strings.CutPrefix(h, "172."); ok {
		oct, _, _ := strings.Cut(rest, ".")
		return len(oct) == 2 && oct >= "16" && oct <= "31"
	}
	return false
}

func scanDeclaration(name, text string) []Finding {
	var out []Finding
	for _, r := range []struct {
		id string
		re *regexp.Regexp
	}{{"declaration-prompt-override", promptOverrideRE}, {"declaration-sensitive-capability", capabilityRE}, {"declaration-sensitive-path", sensitivePathRE}} {
		if f, ok := match(r.id, name, text, r.re); ok {
			out = append(out, f)
		}
	}
	for _, loc := range urlRE.FindAllStringIndex(text, -1) {
		u := text[loc[0]:loc[1]]
		if strings.EqualFold(u[:7], "http://") {
			if h := httpHost(u); h != "" && !slices.Contains(localHosts, h) {
				out = append(out, newFinding("declaration-external-endpoint", name, lineAt(text, loc[0]), u))
				break
			}
		}
	}
	return out
}

// --- network and resource rules (every text file) ---

var (
	metadataRE = regexp.MustCompile(`(?i)169\.254\.169\.254|metadata\.google\.internal|fd00:ec2::254|100\.100\.100\.200`)
	forkBombRE = regexp.MustCompile(`:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`)
	httpRE     = regexp.MustCompile(`(?i)http://(?:[^/?#\s)'"<>]*@)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d+)?[^\s)'"<>]*`)
)

func scanNetwork(name, text string) []Finding {
	var out []Finding
	if f, ok := match("network-cloud-metadata", name, text, metadataRE); ok {
		out = append(out, f)
	}
	if f, ok := match("resource-fork-bomb", name, text, forkBombRE); ok {
		out = append(out, f)
	}
	if loc := httpRE.FindStringIndex(text); loc != nil {
		u := text[loc[0]:loc[1]]
		id := "network-cleartext-http"
		if isPrivateHost(httpHost(u)) {
			id = "network-local-http"
		}
		if at := strings.LastIndex(u, "@"); at >= 0 {
			u = "http://" + u[at+1:] // never echo credentials in the URL
		}
		out = append(out, newFinding(id, name, lineAt(text, loc[0]), u))
	}
	return out
}
