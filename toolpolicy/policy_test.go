package toolpolicy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

func mustNew(t *testing.T, def string, rules ...config.ToolPolicyRule) *Policy {
	t.Helper()
	p, err := New(config.ToolPolicy{Default: def, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func bashCall(command string) (*tool.Call, json.RawMessage) {
	args, _ := json.Marshal(map[string]string{"command": command})
	return &tool.Call{Name: "bash", Meta: map[string]string{tool.MetaSource: "config"}}, args
}

func mcpCall(name, server string, annotations map[string]string) *tool.Call {
	meta := map[string]string{tool.MetaSource: "mcp", tool.MetaMCPServer: server}
	for k, v := range annotations {
		meta[tool.MetaMCPAnnotationPrefix+k] = v
	}
	return &tool.Call{Name: name, Meta: meta}
}

func TestPolicy_matchesByToolSourceServerAgentAndAnnotations(t *testing.T) {
	p := mustNew(t, "allow",
		config.ToolPolicyRule{Action: "ask", Tool: "write_*", Reason: "writes"},
		config.ToolPolicyRule{Action: "deny", Source: "acp"},
		config.ToolPolicyRule{Action: "deny", MCPServer: "git*"},
		config.ToolPolicyRule{Action: "ask", Source: "mcp", Annotations: map[string]bool{"destructiveHint": true}},
		config.ToolPolicyRule{Action: "deny", Agent: "intern", Tool: "str_replace"},
		config.ToolPolicyRule{Action: "ask", Annotations: map[string]bool{"openWorldHint": false}},
	)
	for _, tc := range []struct {
		name string
		call *tool.Call
		want Decision
	}{
		{"tool glob", &tool.Call{Name: "write_file"}, Decision{Action: ActionAsk, Rule: "tool_policy.rules[0]", Reason: "writes"}},
		{"no rule matches", &tool.Call{Name: "read_file", Meta: map[string]string{tool.MetaSource: "config"}}, Decision{Action: ActionAllow}},
		{"source", &tool.Call{Name: "invoke_acp_agent", Meta: map[string]string{tool.MetaSource: "acp"}}, Decision{Action: ActionDeny, Rule: "tool_policy.rules[1]"}},
		{"server glob", mcpCall("github_create_issue", "github", map[string]string{"readOnlyHint": "true"}), Decision{Action: ActionDeny, Rule: "tool_policy.rules[2]"}},
		{"server glob misses", mcpCall("fs_read", "fs", map[string]string{"readOnlyHint": "true"}), Decision{Action: ActionAllow}},
		{"destructive by the MCP default", mcpCall("fs_write", "fs", nil), Decision{Action: ActionAsk, Rule: "tool_policy.rules[3]"}},
		{"stated not destructive", mcpCall("fs_append", "fs", map[string]string{"destructiveHint": "false"}), Decision{Action: ActionAllow}},
		{"read-only is not destructive", mcpCall("fs_list", "fs", map[string]string{"readOnlyHint": "true", "destructiveHint": "true"}), Decision{Action: ActionAllow}},
		{"promoted tool without a source label", &tool.Call{Name: "fs_write", Meta: map[string]string{tool.MetaMCPServer: "fs"}}, Decision{Action: ActionAsk, Rule: "tool_policy.rules[3]"}},
		{"stated closed world", mcpCall("mem_get", "mem", map[string]string{"readOnlyHint": "true", "openWorldHint": "false"}), Decision{Action: ActionAsk, Rule: "tool_policy.rules[5]"}},
		{"annotations never match other tools", &tool.Call{Name: "ls", Meta: map[string]string{tool.MetaSource: "config"}}, Decision{Action: ActionAllow}},
		{"agent glob", &tool.Call{Name: "str_replace", AgentName: "intern"}, Decision{Action: ActionDeny, Rule: "tool_policy.rules[4]"}},
		{"other agent", &tool.Call{Name: "str_replace", AgentName: "lead"}, Decision{Action: ActionAllow}},
		{"nil meta", &tool.Call{Name: "bash"}, Decision{Action: ActionAllow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, p.Decide(tc.call, json.RawMessage(`{}`))); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPolicy_denyBeatsAskBeatsAllow(t *testing.T) {
	allow := config.ToolPolicyRule{Action: "allow", Tool: "bash"}
	ask := config.ToolPolicyRule{Action: "ask", Tool: "ba*"}
	deny := config.ToolPolicyRule{Action: "deny", Source: "config"}
	for _, tc := range []struct {
		name  string
		def   string
		rules []config.ToolPolicyRule
		want  Decision
	}{
		{"deny after ask and allow", "allow", []config.ToolPolicyRule{allow, ask, deny}, Decision{Action: ActionDeny, Rule: "tool_policy.rules[2]"}},
		{"ask after allow", "allow", []config.ToolPolicyRule{allow, ask}, Decision{Action: ActionAsk, Rule: "tool_policy.rules[1]"}},
		{"first of one action names it", "allow", []config.ToolPolicyRule{ask, ask}, Decision{Action: ActionAsk, Rule: "tool_policy.rules[0]"}},
		{"allow over an ask default", "ask", []config.ToolPolicyRule{allow}, Decision{Action: ActionAllow, Rule: "tool_policy.rules[0]"}},
		{"deny default", "deny", nil, Decision{Action: ActionDeny}},
		{"empty default is allow", "", nil, Decision{Action: ActionAllow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call, args := bashCall("ls")
			if diff := cmp.Diff(tc.want, mustNew(t, tc.def, tc.rules...).Decide(call, args)); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPolicy_noTrickHidesADeniedCommand: separators, substitutions,
// quoting, shells, eval and wrappers cannot hide rm from a deny rule.
func TestPolicy_noTrickHidesADeniedCommand(t *testing.T) {
	p := mustNew(t, "allow", config.ToolPolicyRule{Action: "deny", Command: "rm -rf *", Reason: "no recursive deletes"})
	for _, tc := range []struct{ name, line string }{
		{"plain", "rm -rf b"},
		{"after a semicolon", "a; rm -rf b"},
		{"after and", "true && rm -rf b"},
		{"after or", "false || rm -rf b"},
		{"in a pipe", "echo | rm -rf b"},
		{"on a new line", "ls\nrm -rf b"},
		{"in a subshell", "(rm -rf b)"},
		{"in a group", "{ rm -rf b; }"},
		{"command substitution", "echo $(rm -rf b)"},
		{"backticks", "echo `rm -rf b`"},
		{"substitution in double quotes", `echo "$(rm -rf b)"`},
		{"process substitution", "cat <(rm -rf b)"},
		{"here-string", "cat <<< $(rm -rf b)"},
		{"piped into sh", "echo 'rm -rf b' | sh"},
		{"bash -c", "bash -c 'rm -rf b'"},
		{"sh -c nested", `sh -c "bash -c 'rm -rf b'"`},
		{"eval", "eval 'rm -rf b'"},
		{"empty quotes", "r''m -rf b"},
		{"double-quoted name", `"rm" -rf b`},
		{"backslash", `\rm -rf b`},
		{"full path", "/bin/rm -rf b"},
		{"env prefix", "FOO=1 rm -rf b"},
		{"env", "env FOO=1 rm -rf b"},
		{"command", "command rm -rf b"},
		{"sudo", "sudo -u root rm -rf b"},
		{"nice nohup timeout", "nice -n 10 nohup timeout 5 rm -rf b"},
		{"xargs", "echo b | xargs rm -rf"},
		{"find -exec", `find . -exec rm -rf {} \;`},
		{"busybox", "busybox rm -rf b"},
		{"variable as name", "$RM -rf b"},
		{"substitution as name", `"$(echo rm)" -rf b`},
		{"does not parse", "rm -rf b 'unterminated"},
		{"in the background", "rm -rf b &"},
		{"negated", "! rm -rf b"},
		{"timed", "time rm -rf b"},
		{"exec", "exec rm -rf b"},
		{"in an if", "if rm -rf b; then :; fi"},
		{"in a case", "case x in x) rm -rf b;; esac"},
		{"in a function", "f() { rm -rf b; }"},
		{"assignment before", "a=$(rm -rf b) true"},
		{"ANSI-C quoted name", `$'\x72m' -rf b`},
		{"IFS between words", "rm${IFS}-rf b"},
		{"quoted pieces", `"r"'m' -rf b`},
		{"backslash inside", `r\m -rf b`},
		{"xargs sh -c", `echo b | xargs sh -c 'rm -rf "$@"' _`},
		{"watch", "watch -n 1 rm -rf b"},
		{"an alias", "shopt -s expand_aliases; alias x='rm -rf'; x b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call, args := bashCall(tc.line)
			if d := p.Decide(call, args); d.Action != ActionDeny || d.Rule != "tool_policy.rules[0]" || d.Reason != "no recursive deletes" {
				t.Errorf("%q: %+v, want the deny rule", tc.line, d)
			}
		})
	}
	for _, line := range []string{"ls -la", "echo rm -rf b", "rm b", "grep -r 'rm -rf' ."} {
		call, args := bashCall(line)
		if d := p.Decide(call, args); d.Action != ActionAllow {
			t.Errorf("%q: %+v, want allow", line, d)
		}
	}
}

// TestPolicy_allowNeedsEveryCommandAllowed: under an ask default, an allow
// rule lets a line through only when each of its commands is allowed.
func TestPolicy_allowNeedsEveryCommandAllowed(t *testing.T) {
	p := mustNew(t, "ask",
		config.ToolPolicyRule{Action: "allow", Command: "git status:*"},
		config.ToolPolicyRule{Action: "allow", Command: "git diff *"},
		config.ToolPolicyRule{Action: "allow", Command: "timeout *"},
	)
	for _, tc := range []struct {
		line string
		want Action
	}{
		{"git status", ActionAllow},
		{"git status --short", ActionAllow},
		{"git status && git diff HEAD", ActionAllow},
		{"timeout 5 git diff", ActionAllow},
		{"git status; rm x", ActionAsk},
		{"git status $(rm x)", ActionAsk},
		{"timeout 5 rm x", ActionAsk},
		{"./git status", ActionAsk},
		{"$GIT status", ActionAsk},
		{"", ActionAsk},
		{"git statusx", ActionAsk},
	} {
		call, args := bashCall(tc.line)
		if d := p.Decide(call, args); d.Action != tc.want {
			t.Errorf("%q: %+v, want %s", tc.line, d, tc.want)
		}
	}
}

func TestPolicy_commandRules(t *testing.T) {
	p := mustNew(t, "allow",
		config.ToolPolicyRule{Action: "ask", Command: "git push*"},
		config.ToolPolicyRule{Action: "deny", Command: "curl *", Tool: "run_*"},
	)
	for _, tc := range []struct {
		name string
		call *tool.Call
		args string
		want Decision
	}{
		{"prefix", &tool.Call{Name: "bash"}, `{"command":"cd x && git push origin main"}`, Decision{Action: ActionAsk, Rule: "tool_policy.rules[0]", Command: "git push origin main"}},
		{"command rules are for bash by default", &tool.Call{Name: "shell"}, `{"command":"git push"}`, Decision{Action: ActionAllow}},
		{"command rule with a tool glob", &tool.Call{Name: "run_shell"}, `{"command":"curl -s x"}`, Decision{Action: ActionDeny, Rule: "tool_policy.rules[1]", Command: "curl -s x"}},
		{"missing command", &tool.Call{Name: "bash"}, `{}`, Decision{Action: ActionAsk, Rule: "tool_policy.rules[0]"}},
		{"command not a string", &tool.Call{Name: "bash"}, `{"command":3}`, Decision{Action: ActionAsk, Rule: "tool_policy.rules[0]"}},
		{"too long to check", &tool.Call{Name: "bash"}, `{"command":"` + strings.Repeat("a", 70000) + `"}`, Decision{Action: ActionAsk, Rule: "tool_policy.rules[0]", Command: strings.Repeat("a", maxCommandText) + "…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, p.Decide(tc.call, json.RawMessage(tc.args))); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNew_refusesBadRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  config.ToolPolicy
		want string
	}{
		{"default", config.ToolPolicy{Default: "maybe"}, "tool_policy.default: must be allow, ask or deny"},
		{"action", config.ToolPolicy{Rules: []config.ToolPolicyRule{{Action: "block", Tool: "x"}}}, "tool_policy.rules[0].action"},
		{"no matcher", config.ToolPolicy{Rules: []config.ToolPolicyRule{{Action: "deny"}}}, "tool_policy.rules[0]: needs at least one"},
		{"source", config.ToolPolicy{Rules: []config.ToolPolicyRule{{Action: "deny", Source: "plugin"}}}, "tool_policy.rules[0].source"},
		{"annotation", config.ToolPolicy{Rules: []config.ToolPolicyRule{{Action: "deny", Annotations: map[string]bool{"x": true}}}}, "tool_policy.rules[0].annotations.x"},
		{"pattern", config.ToolPolicy{Rules: []config.ToolPolicyRule{{Action: "deny", Command: `rm \`}}}, "tool_policy.rules[0].command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"write_*", "write_file", true},
		{"write_*", "read_file", false},
		{"a?c", "abc", true},
		{"a?c", "a端c", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{"rm -rf *", "rm -rf /x y", true},
	} {
		if got := glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// FuzzCommandMatch checks that no pattern or line panics the matcher, that
// "*" matches every text, and that a deny rule of "*" denies every line
// with at least one command (a line that does not parse counts as one).
func FuzzCommandMatch(f *testing.F) {
	for _, s := range []string{"rm -rf *", "git push:*", `a\`, "*", "?"} {
		f.Add(s, "a; rm -rf b $(c) `d`")
	}
	deny, err := New(config.ToolPolicy{Rules: []config.ToolPolicyRule{{Action: "deny", Command: "*"}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, pattern, line string) {
		_ = newCommandPattern(pattern).match(line)
		if !newCommandPattern("*").match(line) {
			t.Fatalf("* did not match %q", line)
		}
		call, args := bashCall(line)
		if d := deny.Decide(call, args); len(commandLine(args)) > 0 && d.Action != ActionDeny {
			t.Fatalf("%q was not denied by *: %+v", line, d)
		}
	})
}
