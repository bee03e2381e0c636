package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/antlerhq/antler/config"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

func TestCompletion_scripts(t *testing.T) {
	for shell, want := range map[string]string{
		"bash":       "__start_antler",
		"zsh":        "#compdef antler",
		"fish":       "complete -c antler",
		"powershell": "Register-ArgumentCompleter",
	} {
		t.Run(shell, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, "completion", shell)
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("exit %d err %q; want a script containing %q, got %d bytes", code, errOut, want, len(out))
			}
		})
	}
	if code, _, errOut := runCLI(t, nil, "completion", "tcsh"); code != 2 || !strings.Contains(errOut, `invalid argument "tcsh"`) {
		t.Errorf("completion tcsh: exit %d, stderr %q; want 2", code, errOut)
	}
}

// The scripts call `antler __complete`; it completes commands and the MCP
// server names of the extensions file.
func TestCompletion_completesCommandsAndServerNames(t *testing.T) {
	dir := t.TempDir()
	ext := writeFile(t, dir, "extensions_config.json", `{"mcpServers": {"memory": {"command": "x"}, "github": {"command": "y"}}}`)
	code, out, _ := runCLI(t, nil, "__complete", "m")
	if code != 0 || !strings.Contains(out, "mcp\t") {
		t.Errorf("__complete m: exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI(t, nil, "--extensions", ext, "__complete", "mcp", "get", "")
	if code != 0 || !strings.HasPrefix(out, "github\nmemory\n:4\n") {
		t.Errorf("__complete mcp get: exit %d:\n%s", code, out)
	}
}

func TestUnknownCommand_suggestionOnOneLine(t *testing.T) {
	tests := []struct{ args []string }{{[]string{"tool"}}, {[]string{"tools", "lst"}}}
	want := map[string]string{
		"tool": `antler: unknown command "tool" for "antler" (did you mean "tools"?)` + "\n",
		"lst":  `antler: unknown command "lst" for "antler tools" (did you mean "list"?)` + "\n",
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, nil, tt.args...)
		if code != 2 || out != "" || errOut != want[tt.args[len(tt.args)-1]] {
			t.Errorf("antler %v: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errOut, want[tt.args[len(tt.args)-1]])
		}
	}
}

func TestRun_promptFromStdin(t *testing.T) {
	var got string
	srv := modeltest.NewServer(t, modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
		for _, m := range req.Messages {
			if m.Role == model.RoleUser {
				got = m.Content
			}
		}
		return modeltest.Turn{Text: "ok"}
	}})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "models:\n  - {name: m, use: langchain_openai:ChatOpenAI, model: x, api_key: k, base_url: "+srv.URL+"}\n"+
		"sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n")
	code, out, errOut := runCLIStdin(t, "  what is 2+2?\n", "--config", cfg, "--home", dir, "run")
	if code != 0 || !strings.Contains(got, "\nwhat is 2+2?\n") || !strings.Contains(out, "ok") {
		t.Errorf("exit %d, model got %q, out %q, err %q", code, got, out, errOut)
	}
	code, _, errOut = runCLIStdin(t, "\n", "--config", cfg, "--home", dir, "run")
	if code != 2 || !strings.Contains(errOut, "run needs a PROMPT") || !strings.Contains(errOut, "| antler run") {
		t.Errorf("empty stdin: exit %d, stderr %q; want 2 and how to give a prompt", code, errOut)
	}
}

func TestToolsSearch_saysWhyNothingIsFound(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "models:\n  - {name: m, use: langchain_openai:ChatOpenAI, model: x, api_key: k}\n"+
		"sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n")
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "search", "weather")
	if code != 0 || !strings.Contains(out, "No MCP tools to search: no extensions_config.json") {
		t.Errorf("no extensions file: exit %d out %q err %q", code, out, errOut)
	}
	writeFile(t, dir, "extensions_config.json", `{"mcpServers": {"off": {"enabled": false, "command": "x"}}}`)
	code, out, _ = runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "search", "weather")
	if code != 0 || !strings.Contains(out, "is disabled (antler mcp enable NAME)") {
		t.Errorf("all disabled: exit %d out %q", code, out)
	}
	writeFile(t, dir, "extensions_config.json", `{"mcpServers": {"ghost": {"command": "/nonexistent/antler-test-server"}}}`)
	code, out, _ = runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "search", "--json", "weather")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("--json: exit %d out %q, want []", code, out)
	}
	code, out, _ = runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "search", "weather")
	if code != 0 || !strings.Contains(out, "no MCP server connected (ghost: ") {
		t.Errorf("failed server: exit %d out %q", code, out)
	}
}

func TestTable_fitsWidth(t *testing.T) {
	tests := []struct {
		name  string
		width int
		want  string
	}{
		{"fits", 40, "NAME  DESCRIPTION\nab    short\nabc   a longer description\n"},
		{"cut", 20, "NAME  DESCRIPTION\nab    short\nabc   a longer desc…\n"},
		{"never below the minimum", 5, "NAME  DESCRIPTION\nab    short\nabc   a longer de…\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &table{header: []string{"NAME", "DESCRIPTION"}, flex: 1}
			tb.add("ab", "short")
			tb.add("abc", "a longer description")
			var b strings.Builder
			if err := tb.write(&b, tt.width); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}

func TestRedact_masksSecretsInReasons(t *testing.T) {
	s := mcpServerForRedact()
	got := redact(`Post "https://u:hunter22@h/mcp?token=abcdef": 401 for Bearer tok-123456`, s)
	if strings.Contains(got, "hunter22") || strings.Contains(got, "abcdef") || strings.Contains(got, "tok-123456") {
		t.Errorf("redact left a secret: %s", got)
	}
}

func mcpServerForRedact() config.MCPServer {
	return config.MCPServer{Type: "http", URL: "https://u:hunter22@h/mcp?token=abcdef",
		Headers: map[string]string{"Authorization": "Bearer tok-123456"}}
}

// runCLIStdin is runCLI with stdin.
func runCLIStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	opts := Options{Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(stdin), Getenv: func(string) string { return "" }}
	code := Main(t.Context(), args, opts)
	return code, out.String(), errOut.String()
}
