package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The config half of issue #22 through the command line: typos are
// caught where they are written, a broken tool costs only itself in the
// tools commands, --model must name a model, and .env is read.

// typoTools is a config with a misspelt web_search option (line 9) and a
// working echo tool.
const typoTools = `models:
  - name: default
    use: langchain_openai:ChatOpenAI
    model: m
tools:
  - name: web_search
    group: web
    use: deerflow.community.ddg_search.tools:web_search_tool
    max_result: 3
  - name: echo
    group: text
    use: antler:command
    command: ["cat"]
sandbox:
  use: deerflow.sandbox.local:LocalSandboxProvider
`

const typoToolsError = `config.yaml:9: tools[0].max_result: unknown key "max_result" (did you mean "max_results"?) (options of tool "web_search")`

func TestToolOptionTypo_costsOnlyThatTool(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", typoTools)
	t.Chdir(dir) // so that errors name the file as "config.yaml"

	t.Run("tools call of another tool works and names the broken one", func(t *testing.T) {
		code, out, errOut := runCLI(t, nil, "--config", "config.yaml", "--home", dir, "tools", "call", "echo", "--args", `{"x": 1}`)
		if code != 0 {
			t.Fatalf("exit %d, want 0: %s", code, errOut)
		}
		if !strings.Contains(out, `"x"`) {
			t.Errorf("echo output %q", out)
		}
		if !strings.Contains(errOut, "tool web_search left out: "+filepath.Join(dir, "config.yaml")+":9:") ||
			!strings.Contains(errOut, `tools[0].max_result: unknown key \"max_result\" (did you mean \"max_results\"?)`) {
			t.Errorf("stderr does not report the broken tool at its line:\n%s", errOut)
		}
		if strings.Contains(errOut, "community.SearchOptions") || strings.Contains(errOut, "line 1") {
			t.Errorf("stderr speaks of Go types or a wrong line:\n%s", errOut)
		}
	})
	t.Run("tools list lists the others and exits 2", func(t *testing.T) {
		code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list", "--json")
		if code != 2 {
			t.Fatalf("exit %d, want 2: %s", code, errOut)
		}
		if strings.Contains(out, `"web_search"`) || !strings.Contains(out, `"echo"`) {
			t.Errorf("list: %s", out)
		}
		if !strings.Contains(errOut, "tool web_search left out") {
			t.Errorf("stderr: %s", errOut)
		}
	})
	t.Run("tools call of the broken tool is a config error", func(t *testing.T) {
		code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "call", "web_search", "--args", `{"query": "q"}`)
		if code != 2 || !strings.Contains(errOut, "tools[0].max_result: unknown key") {
			t.Errorf("exit %d, want 2 naming the key; stderr %s", code, errOut)
		}
	})
	t.Run("run needs every tool: exit 2", func(t *testing.T) {
		code, _, errOut := runCLI(t, map[string]string{"OPENAI_API_KEY": "k"}, "--config", "config.yaml", "--home", dir, "run", "hi")
		if code != 2 || !strings.Contains(errOut, typoToolsError) {
			t.Errorf("exit %d, want 2 with\n%s\nstderr %s", code, typoToolsError, errOut)
		}
	})
	t.Run("doctor fails the assembly with exit 2", func(t *testing.T) {
		code, out, _ := runCLI(t, nil, "--config", "config.yaml", "--home", dir, "doctor", "--timeout", "1ms")
		if code != 2 || !strings.Contains(out, typoToolsError) {
			t.Errorf("exit %d, want 2 with %s:\n%s", code, typoToolsError, out)
		}
	})
}

func TestTypos_issueExamplesExit2(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                string
	}{
		{"modles", "config.yaml", "modles:\n  - {name: m, use: u, model: x}\n",
			`config.yaml:2: modles: unknown key "modles" (did you mean "models"?)`},
		{"tool_serach", "config.yaml", "tool_serach:\n  enabled: true\n",
			`config.yaml:2: tool_serach: unknown key "tool_serach" (did you mean "tool_search"?)`},
		{"mcpServer", "extensions_config.json", "{\n  \"mcpServer\": {}\n}\n",
			`extensions_config.json:2: mcpServer: unknown key "mcpServer" (did you mean "mcpServers"?)`},
		{"tool_call_timout", "extensions_config.json", "{\"mcpServers\": {\"fs\": {\n  \"command\": \"npx\",\n  \"tool_call_timout\": 5}}}\n",
			`extensions_config.json:3: mcpServers.fs.tool_call_timout: unknown key "tool_call_timout" (did you mean "tool_call_timeout"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := "sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n"
			if tt.file == "config.yaml" {
				cfg += tt.content
			}
			writeFile(t, dir, "config.yaml", cfg)
			if tt.file != "config.yaml" {
				writeFile(t, dir, tt.file, tt.content)
			}
			for _, cmd := range [][]string{{"tools", "list"}, {"run", "hi"}, {"doctor"}} {
				args := append([]string{"--config", filepath.Join(dir, "config.yaml"), "--home", dir}, cmd...)
				code, out, errOut := runCLI(t, nil, args...)
				want := filepath.Join(dir, tt.want)
				if code != 2 || !strings.Contains(out+errOut, want) {
					t.Errorf("%v: exit %d, want 2 with %s\nstdout %s\nstderr %s", cmd, code, want, out, errOut)
				}
			}
		})
	}
}

func TestTypos_modelKeyWarnsAndDoctorListsIt(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "models:\n  - name: m\n    use: langchain_openai:ChatOpenAI\n    model: x\n    api_key: k\n    base_url: http://127.0.0.1:1/v1\n    max_token: 100\nsandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n")
	want := cfg + `:7: models[0].max_token: unknown key "max_token" (did you mean "max_tokens"?); passed through`
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "doctor", "--json", "--timeout", "1ms")
	var checks []check
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("exit %d: %v: %s %s", code, err, out, errOut)
	}
	found := false
	for _, c := range checks {
		found = found || c.Check == "config" && c.Status == "warn" && strings.HasPrefix(c.Detail, want)
	}
	if !found {
		t.Errorf("doctor has no warning %q:\n%s", want, out)
	}
	_, _, errOut = runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list")
	if !strings.Contains(errOut, `models[0].max_token: unknown key \"max_token\" (did you mean \"max_tokens\"?)`) {
		t.Errorf("tools list does not warn:\n%s", errOut)
	}
}

func TestModelFlag_namingNoModelExits2(t *testing.T) {
	dir := t.TempDir()
	// models: default, then gpt-5.
	cfg := writeFile(t, dir, "config.yaml", strings.Replace(cliConfig, "tools:\n", "  - name: gpt-5\n    use: langchain_openai:ChatOpenAI\n    model: gpt-5\ntools:\n", 1))
	want := `--model: no model named "gpt5" in ` + cfg + ` (did you mean "gpt-5"?); configured: default, gpt-5`
	for _, cmd := range [][]string{{"run", "--model", "gpt5", "hi"}, {"chat", "--model", "gpt5"},
		{"tools", "list", "--model", "gpt5"}, {"tools", "call", "echo", "--model", "gpt5"}} {
		code, _, errOut := runCLI(t, nil, append([]string{"--config", cfg, "--home", dir}, cmd...)...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d, want 2 with %s; stderr %s", cmd, code, want, errOut)
		}
		if strings.Contains(errOut, "fallback") || strings.Contains(errOut, "level=WARN") {
			t.Errorf("%v: stderr still logs the fallback: %s", cmd, errOut)
		}
	}
}

// TestDotEnv_besideTheConfig: the .env beside config.yaml supplies a
// $VAR of the config, an existing variable wins, and doctor names which
// file supplied which variable without its value.
func TestDotEnv_besideTheConfig(t *testing.T) {
	dir := t.TempDir()
	const supplied, kept = "ANTLER_TEST_DOTENV_SUPPLIED", "ANTLER_TEST_DOTENV_KEPT"
	// Registered with t.Setenv so that the test restores them; then unset,
	// so that the .env file is what sets the first.
	t.Setenv(supplied, "")
	os.Unsetenv(supplied)
	t.Setenv(kept, "from-environment")
	writeFile(t, dir, ".env", supplied+"=secret-from-file\n"+kept+"=value-from-file\n")
	cfg := writeFile(t, dir, "config.yaml", "models:\n  - name: m\n    use: langchain_openai:ChatOpenAI\n    model: x\n    api_key: $"+supplied+"\n    base_url: http://127.0.0.1:1/v1\nsandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n")
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "doctor", "--json", "--timeout", "1ms")
	var checks []check
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("exit %d: %v: %s %s", code, err, out, errOut)
	}
	var env *check
	for i := range checks {
		if checks[i].Check == "config" && checks[i].Status == "fail" {
			t.Fatalf("config did not load: $%s not supplied by .env: %s", supplied, checks[i].Detail)
		}
		if checks[i].Check == "env" {
			env = &checks[i]
		}
	}
	if env == nil {
		t.Fatalf("no env check:\n%s", out)
	}
	wantDetail := "supplied " + supplied + "; already set in the environment, kept: " + kept
	if env.Name != filepath.Join(dir, ".env") || env.Status != "ok" || env.Detail != wantDetail {
		t.Errorf("env check = %+v, want %s: %s", *env, filepath.Join(dir, ".env"), wantDetail)
	}
	if strings.Contains(out, "secret-from-file") || strings.Contains(out, "value-from-file") {
		t.Errorf("doctor prints a value:\n%s", out)
	}
	if got := os.Getenv(kept); got != "from-environment" {
		t.Errorf("%s = %q; the environment must win", kept, got)
	}
}
