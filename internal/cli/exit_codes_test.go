package cli

import (
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// One rule for exit codes in every command (README.md, "Exit codes"): 0
// ok, 1 a runtime failure, 2 a usage or configuration error. The table
// has a row per command; TestExitCodes_everyCommandHasARow fails when a
// command is added without one.

// exitCase is one invocation of a command and the exit code it must give.
type exitCase struct {
	name string
	args []string // after the global --config and --home flags
	want int
}

// exitFixture is a home with three configs: ok (a scripted tool, a
// model on a closed port), broken (a typo) and one with a broken
// extensions file.
type exitFixture struct {
	dir, ok, broken, brokenExt string
	brokenTool                 string // ok, plus a tool with a misspelt option
	busyAddr                   string // an address another listener holds
}

func newExitFixture(t *testing.T) exitFixture {
	t.Helper()
	dir := t.TempDir()
	const base = "models:\n  - name: m\n    use: langchain_openai:ChatOpenAI\n    model: x\n    api_key: k\n    base_url: http://127.0.0.1:1/v1\n    max_retries: 0\n" +
		"tools:\n  - {name: echo, group: text, use: antler:command, command: [cat]}\n  - {name: fails, group: text, use: antler:command, command: [sh, -c, 'exit 3']}\n" +
		"sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n"
	f := exitFixture{dir: dir}
	for _, sub := range []string{"ok", "broken", "ext", "tool"} {
		if err := os.Mkdir(dir+"/"+sub, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.ok = writeFile(t, dir+"/ok", "config.yaml", base)
	f.broken = writeFile(t, dir+"/broken", "config.yaml", base+"tool_serach: {enabled: true}\n")
	f.brokenExt = writeFile(t, dir+"/ext", "config.yaml", base)
	f.brokenTool = writeFile(t, dir+"/tool", "config.yaml", strings.Replace(base, "tools:\n",
		"tools:\n  - {name: cmd, group: text, use: antler:command, command: [cat], timout: 3}\n", 1))
	writeFile(t, dir+"/ext", "extensions_config.json", `{"mcpServer": {}}`)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f.busyAddr = ln.Addr().String()
	return f
}

// exitTable returns the rows of each command path ("tools list"): a bad
// flag and, for commands that read the config, a config error in
// config.yaml and in extensions_config.json (exit 2), and the commands'
// own success and runtime failures.
func exitTable(f exitFixture) map[string][]exitCase {
	cfgErrs := func(args ...string) []exitCase {
		return []exitCase{
			{"bad flag", append(slices.Clone(args), "--no-such-flag"), 2},
			{"typo in config.yaml", append([]string{"--config", f.broken}, args...), 2},
			{"typo in extensions_config.json", append([]string{"--config", f.brokenExt}, args...), 2},
		}
	}
	ok := func(args ...string) []string { return append([]string{"--config", f.ok}, args...) }
	return map[string][]exitCase{
		"version": {{"ok", []string{"version"}, 0}, {"bad flag", []string{"version", "--no-such-flag"}, 2}, {"extra argument", []string{"version", "x"}, 2}},
		"tools list": append(cfgErrs("tools", "list"),
			exitCase{"ok", ok("tools", "list"), 0},
			exitCase{"a tool does not build", []string{"--config", f.brokenTool, "tools", "list"}, 2}),
		"tools call": append(cfgErrs("tools", "call", "echo"),
			exitCase{"ok", ok("tools", "call", "echo", "--args", "{}"), 0},
			exitCase{"another tool does not build", []string{"--config", f.brokenTool, "tools", "call", "echo", "--args", "{}"}, 0},
			exitCase{"the tool does not build", []string{"--config", f.brokenTool, "tools", "call", "cmd", "--args", "{}"}, 2},
			exitCase{"the tool reports an error", ok("tools", "call", "fails", "--args", "{}"), 1},
			exitCase{"no such tool", ok("tools", "call", "nope"), 2},
			exitCase{"arguments not an object", ok("tools", "call", "echo", "--args", "[]"), 2},
			exitCase{"no name", ok("tools", "call"), 2}),
		"tools search": append(cfgErrs("tools", "search", "x"),
			exitCase{"ok", ok("tools", "search", "x"), 0},
			exitCase{"a tool does not build", []string{"--config", f.brokenTool, "tools", "search", "x"}, 0},
			exitCase{"no query", ok("tools", "search"), 2}),
		"doctor": append(cfgErrs("doctor"),
			exitCase{"model unreachable", ok("doctor", "--timeout", "2s"), 1}),
		"run": append(cfgErrs("run", "hi"),
			exitCase{"model unreachable", ok("run", "hi"), 1},
			exitCase{"a tool does not build", []string{"--config", f.brokenTool, "run", "hi"}, 2},
			exitCase{"--model names no model", ok("run", "--model", "nope", "hi"), 2},
			exitCase{"bad --thread", ok("run", "--thread", "a/b", "hi"), 2}),
		"chat": append(cfgErrs("chat"),
			exitCase{"--model names no model", ok("chat", "--model", "nope"), 2}),
		// The mcp commands read only the extensions file; the editing
		// ones succeed in mcp_cmd_test.go (they would change this
		// fixture's files).
		"mcp list": {{"bad flag", []string{"mcp", "list", "--no-such-flag"}, 2},
			{"typo in extensions_config.json", []string{"--config", f.brokenExt, "mcp", "list"}, 2},
			{"no extensions file", []string{"--config", f.dir + "/none/config.yaml", "mcp", "list"}, 2}},
		"mcp get": {{"no name", ok("mcp", "get"), 2},
			{"typo in extensions_config.json", []string{"--config", f.brokenExt, "mcp", "get", "x"}, 2}},
		"mcp add": {{"no command", ok("mcp", "add", "a"), 2},
			{"bad transport", ok("mcp", "add", "-t", "ws", "a", "u"), 2}},
		"mcp remove":  {{"no such server", []string{"--config", f.brokenExt, "mcp", "remove", "x"}, 2}},
		"mcp enable":  {{"no such server", []string{"--config", f.brokenExt, "mcp", "enable", "x"}, 2}},
		"mcp disable": {{"no such server", []string{"--config", f.brokenExt, "mcp", "disable", "x"}, 2}},
		"mcp login": {{"no name", ok("mcp", "login"), 2},
			{"typo in extensions_config.json", []string{"--config", f.brokenExt, "mcp", "login", "x"}, 2}},
		"mcp logout": {{"no name", ok("mcp", "logout"), 2}},
		// The memory commands read config.yaml, not the extensions file;
		// none of these rows changes the memory.
		"memory list": {{"bad flag", []string{"memory", "list", "--no-such-flag"}, 2},
			{"typo in config.yaml", []string{"--config", f.broken, "memory", "list"}, 2},
			{"ok", ok("memory", "list"), 0}},
		"memory show":   {{"no such fact", ok("memory", "show", "fact_nope"), 2}, {"no id", ok("memory", "show"), 2}},
		"memory forget": {{"--all without --yes", ok("memory", "forget", "--all"), 2}, {"no such fact", ok("memory", "forget", "fact_nope"), 2}},
		"memory export": {{"ok", ok("memory", "export"), 0},
			{"typo in config.yaml", []string{"--config", f.broken, "memory", "export"}, 2}},
		"memory import": {{"no such file", ok("memory", "import", f.dir+"/none.json"), 2}, {"no file", ok("memory", "import"), 2}},
		// skills review reads no config; a package without SKILL.md is a
		// blocker, which fails only a gate.
		"skills review": {{"no target", ok("skills", "review"), 2}, {"no such target", ok("skills", "review", f.dir+"/none"), 2},
			{"bad --fail-on", ok("skills", "review", "--fail-on", "sometimes", f.dir), 2},
			{"blocker without a gate", ok("skills", "review", f.dir), 0},
			{"blocker with --fail-on blocker", ok("skills", "review", "--fail-on", "blocker", f.dir), 1}},
		"completion": {{"ok", []string{"completion", "bash"}, 0}, {"unknown shell", []string{"completion", "tcsh"}, 2},
			{"no shell", []string{"completion"}, 2}},
		"serve": append(cfgErrs("serve", "--addr", "127.0.0.1:0"),
			exitCase{"address in use", ok("serve", "--addr", f.busyAddr), 1}),
	}
}

func TestExitCodes_everyCommand(t *testing.T) {
	f := newExitFixture(t)
	for path, cases := range exitTable(f) {
		for _, tc := range cases {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				args := append([]string{"--home", f.dir}, tc.args...)
				code, _, errOut := runCLI(t, nil, args...)
				if code != tc.want {
					t.Errorf("antler %s: exit %d, want %d; stderr:\n%s", strings.Join(tc.args, " "), code, tc.want, errOut)
				}
				if code != 0 && !strings.HasPrefix(lastLine(errOut), "antler: ") {
					t.Errorf("a failing command must end with one \"antler: \" line; stderr:\n%s", errOut)
				}
			})
		}
	}
}

// TestExitCodes_everyCommandHasARow walks the command tree.
func TestExitCodes_everyCommandHasARow(t *testing.T) {
	table := exitTable(exitFixture{})
	var walk func(c *cobra.Command, prefix string)
	walk = func(c *cobra.Command, prefix string) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			path := strings.TrimSpace(prefix + " " + sub.Name())
			if sub.HasSubCommands() {
				walk(sub, path)
				continue
			}
			if _, ok := table[path]; !ok {
				t.Errorf("command %q has no row in exitTable", path)
			}
		}
	}
	walk(newRoot((&Options{}).withDefaults()), "")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
