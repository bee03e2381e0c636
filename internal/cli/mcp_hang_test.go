package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// hangGuard bounds a command that would wait for a hung MCP server: far
// below the server's 10-minute bound, far above what the command needs.
const hangGuard = 20 * time.Second

// hungFixture writes a config with the sandbox tool ls and an extensions
// file with two servers of this test binary: "hung", which never answers
// initialize and is given hungInit seconds to, and "fake", a normal one.
// Each start of a server appends a line to its file in starts.
func hungFixture(t *testing.T, hungInit float64) (cfg, dir string, starts map[string]string) {
	t.Helper()
	dir = t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	starts = map[string]string{"hung": filepath.Join(dir, "starts-hung"), "fake": filepath.Join(dir, "starts-fake")}
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"hung": map[string]any{"command": exe, "session_init_timeout": hungInit, "env": map[string]string{
			"ANTLER_CLI_TEST_MCP_SERVER": "1", "ANTLER_CLI_TEST_MCP_HANG": "1", "ANTLER_CLI_TEST_MCP_STARTS": starts["hung"]}},
		"fake": map[string]any{"command": exe, "session_init_timeout": 600, "env": map[string]string{
			"ANTLER_CLI_TEST_MCP_SERVER": "1", "ANTLER_CLI_TEST_MCP_STARTS": starts["fake"]}},
	}})
	writeFile(t, dir, "extensions_config.json", string(ext))
	cfg = writeFile(t, dir, "config.yaml", "models:\n  - {name: m, use: langchain_openai:ChatOpenAI, model: x, api_key: k}\n"+
		"tools:\n  - {name: ls, group: file:read, use: deerflow.sandbox.tools:ls_tool}\n"+
		"sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n")
	return cfg, dir, starts
}

// runGuarded runs the CLI in a context that ends after hangGuard and
// fails the test when the command was still running then.
func runGuarded(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	var out, errOut bytes.Buffer
	code := Main(ctx, args, Options{Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(""),
		Getenv: func(string) string { return "" }})
	if ctx.Err() != nil {
		t.Fatalf("%v: still waiting after %s (a hung MCP server held it): exit %d, stderr %s", args, hangGuard, code, errOut.String())
	}
	return code, out.String(), errOut.String()
}

func startCount(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "start\n")
}

// `tools call` of a sandbox tool needs no MCP server: none is started,
// and a server hung at initialize with a 10-minute bound does not delay
// it.
func TestToolsCall_builtinToolWaitsForNoMCPServer(t *testing.T) {
	cfg, dir, starts := hungFixture(t, 600)
	code, out, errOut := runGuarded(t, "--config", cfg, "--home", dir, "tools", "call", "ls",
		"--args", `{"description": "list", "path": "/mnt/user-data/workspace"}`)
	if code != 0 {
		t.Errorf("exit %d, out %q, err %q", code, out, errOut)
	}
	for name, path := range starts {
		if n := startCount(t, path); n != 0 {
			t.Errorf("server %s started %d times for a sandbox tool, want 0", name, n)
		}
	}
}

// `tools call` of an MCP tool waits for its own server only.
func TestToolsCall_mcpToolWaitsOnlyForItsServer(t *testing.T) {
	cfg, dir, starts := hungFixture(t, 600)
	code, out, errOut := runGuarded(t, "--config", cfg, "--home", dir, "tools", "call", "fake_get_weather",
		"--args", `{"city": "Oslo"}`)
	if code != 0 || strings.TrimSpace(out) != "sunny in Oslo" {
		t.Errorf("exit %d, out %q, err %q", code, out, errOut)
	}
	if n := startCount(t, starts["hung"]); n != 0 {
		t.Errorf("the hung server started %d times for another server's tool, want 0", n)
	}
}

// `tools list` needs every server: discovery runs in parallel, each server
// bounded by its own session_init_timeout, so the hung server costs only
// its own tools and its bound; it is reported as skipped with the reason.
func TestToolsList_hungServerCostsOnlyItsTools(t *testing.T) {
	cfg, dir, _ := hungFixture(t, 1)
	code, out, errOut := runGuarded(t, "--config", cfg, "--home", dir, "tools", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var list []toolJSON
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var mcpTools []string
	for _, e := range list {
		if e.Source == "mcp" {
			mcpTools = append(mcpTools, e.Name)
		}
	}
	if diff := cmp.Diff([]string{"fake_get_weather", "fake_list_issues"}, mcpTools); diff != "" {
		t.Errorf("MCP tools (-want +got):\n%s", diff)
	}
	if want := "Skipping MCP server 'hung' after tool discovery timed out (1s)"; !strings.Contains(errOut, want) {
		t.Errorf("stderr does not report the hung server (%q):\n%s", want, errOut)
	}
}
