package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runCLI runs Main with args and returns exit code, stdout and stderr.
// Environment variables come only from env.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	opts := Options{Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(""),
		Getenv: func(k string) string { return env[k] }}
	code := Main(t.Context(), args, opts)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// A config whose tools are all antler:command, so the test does not
// depend on other areas' registrations.
const cliConfig = `models:
  - name: default
    use: langchain_openai:ChatOpenAI
    model: gpt-4o-mini
tools:
  - name: ask_clarification
    group: files
    use: antler:command
    command: ["cat"]
  - name: bash
    group: bash
    use: antler:command
    command: ["sh", "-c", "cat"]
  - name: shell
    group: exec
    use: deerflow.sandbox.tools:bash_tool
  - name: echo
    group: text
    use: antler:command
    command: ["cat"]
sandbox:
  use: deerflow.sandbox.local:LocalSandboxProvider
`

func TestToolsListRules(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", cliConfig)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		// ask_clarification from config wins over the built-in; bash
		// (group) and shell (renamed bash use) are gated under the local
		// sandbox.
		{"all groups", nil, []string{"ask_clarification", "echo", "present_files", "review_skill_package", "list_uploaded_files"}},
		{"group filter", []string{"--groups", "text"}, []string{"echo", "present_files", "ask_clarification", "review_skill_package", "list_uploaded_files"}},
		{"empty group filter keeps no config tool", []string{"--groups", ""}, []string{"present_files", "ask_clarification", "review_skill_package", "list_uploaded_files"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--config", cfg, "--home", dir, "tools", "list", "--json"}, tt.args...)
			code, out, errOut := runCLI(t, nil, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var list []toolJSON
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var names []string
			for _, e := range list {
				names = append(names, e.Name)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestToolsListJSONShape(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", cliConfig)
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list", "--json", "--groups", "text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range list[0] {
		keys = append(keys, k)
	}
	want := []string{"deferred", "description", "group", "input_schema", "name", "source"}
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(keys))); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if string(list[0]["source"]) != `"config"` || string(list[0]["group"]) != `"text"` {
		t.Errorf("first entry: %s", out)
	}
}

func TestToolsListTable(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", cliConfig)
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !regexp.MustCompile(`(?m)^NAME\s+SOURCE\s+GROUP\s+DEFERRED\s+DESCRIPTION$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^echo\s+config\s+text\s+-\s+Runs the command cat`).MatchString(out) {
		t.Errorf("table:\n%s", out)
	}
	if !strings.Contains(errOut, `duplicate tool name \"ask_clarification\"`) {
		t.Errorf("no duplicate warning on stderr: %s", errOut)
	}
}

// Configuration errors exit 2 with one line naming file, line and key.
func TestConfigErrorsExit2WithPosition(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"missing variable", "models:\n  - name: m\n    use: langchain_openai:ChatOpenAI\n    model: x\n    api_key: $ANTLER_TEST_NOPE\nsandbox:\n  use: deerflow.sandbox.local:LocalSandboxProvider\n",
			`config.yaml:5: models\[0\].api_key: .*ANTLER_TEST_NOPE`},
		{"bad use", "tools:\n  - name: t\n    group: g\n    use: antler:comand\nsandbox:\n  use: deerflow.sandbox.local:LocalSandboxProvider\n",
			`config.yaml:2: tools\[0\].use: unknown use "antler:comand" \(nearest registered: antler:command`},
		{"yaml syntax error", "tools:\n  - name: [unclosed\nsandbox: {}\n",
			`config.yaml:\d+: .*`},
		{"wrong type", "sandbox:\n  use: deerflow.sandbox.local:LocalSandboxProvider\n  allow_host_bash: 12x\n",
			`config.yaml:3: sandbox.allow_host_bash: .*`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeFile(t, dir, "config.yaml", tt.yaml)
			code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list")
			if code != 2 {
				t.Fatalf("exit %d, want 2; stdout %q stderr %q", code, out, errOut)
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			last := lines[len(lines)-1]
			if len(lines) != 1 {
				t.Errorf("want one line on stderr, got %d: %q", len(lines), errOut)
			}
			if !regexp.MustCompile(regexp.QuoteMeta(dir) + "/" + tt.want).MatchString(last) {
				t.Errorf("stderr %q does not match %q", last, tt.want)
			}
		})
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", cliConfig)
	for name, args := range map[string][]string{
		"unknown command": {"frobnicate"},
		"unknown flag":    {"tools", "list", "--nope"},
		"bad args json":   {"--config", cfg, "tools", "call", "echo", "--args", "[1]"},
		"unknown tool":    {"--config", cfg, "--home", dir, "tools", "call", "ech"},
		"bad thread id":   {"--config", cfg, "tools", "call", "echo", "--thread", "../x"},
		"missing config":  {"--config", filepath.Join(dir, "nope.yaml"), "tools", "list"},
		"bad log level":   {"--log-level", "loud", "--config", cfg, "tools", "list"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := runCLI(t, nil, args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (%s)", code, errOut)
			}
		})
	}
}

func TestToolsCallCommandTool(t *testing.T) {
	dir := t.TempDir()
	ok := writeFile(t, dir, "ok.sh", "#!/bin/sh\nprintf 'got %s' \"$(cat)\"\n")
	fail := writeFile(t, dir, "fail.sh", "#!/bin/sh\necho broken >&2\nexit 4\n")
	slow := writeFile(t, dir, "slow.sh", "#!/bin/sh\nsleep 20\n")
	badJSON := writeFile(t, dir, "bad.sh", "#!/bin/sh\necho '{\"content\": oops'\n")
	cfg := writeFile(t, dir, "config.yaml", `tools:
  - {name: ok, group: x, use: antler:command, command: ["`+ok+`"]}
  - {name: fail, group: x, use: antler:command, command: ["`+fail+`"]}
  - {name: slow, group: x, use: antler:command, command: ["`+slow+`"], timeout: 0.2}
  - {name: bad, group: x, use: antler:command, command: ["`+badJSON+`"]}
sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
`)
	tests := []struct {
		tool     string
		wantCode int
		want     string
	}{
		{"ok", 0, `got {"q":1}`},
		{"fail", 1, "Error: command tool fail exited with status 4: broken"},
		{"slow", 1, "Error: command tool slow timed out after 200ms"},
		{"bad", 1, "Error: command tool bad printed invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "call", tt.tool, "--args", `{"q":1}`, "--json")
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d: %s", code, tt.wantCode, errOut)
			}
			var res callJSON
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if len(res.Content) != 1 || !strings.HasPrefix(res.Content[0].Text, tt.want) || res.IsError != (tt.wantCode == 1) {
				t.Errorf("result %s, want text prefix %q", out, tt.want)
			}
		})
	}
}

func TestArgsFromStdin(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", cliConfig)
	var out, errOut bytes.Buffer
	code := Main(t.Context(), []string{"--config", cfg, "--home", dir, "tools", "call", "echo", "--args", "-"},
		Options{Stdin: strings.NewReader(`{"from":"stdin"}`), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }})
	if code != 0 || strings.TrimSpace(out.String()) != `{"from":"stdin"}` {
		t.Errorf("exit %d out %q err %q", code, out.String(), errOut.String())
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "antler "+Version) {
		t.Errorf("exit %d out %q", code, out)
	}
}

func TestUnsupportedSandboxProviderExits2(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "sandbox:\n  use: deerflow.community.aio_sandbox:AioSandboxProvider\n")
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list")
	if code != 2 || !strings.Contains(errOut, "sandbox.use") || !strings.Contains(errOut, "AioSandboxProvider") {
		t.Errorf("exit %d, stderr %q: want 2 naming sandbox.use and the provider", code, errOut)
	}
}
