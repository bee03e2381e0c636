package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// npmPeer returns node and the entry point of an npm MCP server of
// testdata/peers, skipping the test when they are not installed.
func npmPeer(t *testing.T, pkg string) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the npm MCP peers cannot run")
	}
	script, _ = filepath.Abs(filepath.Join("..", "..", "testdata", "peers", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	if _, err := os.Stat(script); err != nil {
		t.Skipf("%s is not installed; run: npm ci --prefix testdata/peers", pkg)
	}
	return node, script
}

// The file before `mcp add`: keys the MCP commands do not touch, laid out
// by hand.
const mcpCmdBefore = `{
    "$schema": "./extensions_config.schema.json",
    "middlewares": [],
    "skills": {"research": {"enabled": false}},
    "mcpServers": {}
}
`

func TestMCPCmd_addThenListRealServers(t *testing.T) {
	node, memory := npmPeer(t, "server-memory")
	_, fsServer := npmPeer(t, "server-filesystem")
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "models: []\n")
	ext := filepath.Join(dir, "extensions_config.json")
	if err := os.WriteFile(ext, []byte(mcpCmdBefore), 0o640); err != nil {
		t.Fatal(err)
	}
	mcp := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, nil, append([]string{"--config", cfg, "mcp"}, args...)...)
	}
	for _, args := range [][]string{
		{"add", "memory", "-e", "MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl"), "--", node, memory},
		{"add", "files", "--description", "the test folder", "--", node, fsServer, dir},
		{"add", "--transport", "http", "closed", "http://127.0.0.1:1/mcp", "-H", "Authorization: Bearer s3cret"},
	} {
		if code, out, errOut := mcp(args...); code != 0 || !strings.HasPrefix(out, "Added ") {
			t.Fatalf("mcp %s: exit %d out %q err %q", strings.Join(args, " "), code, out, errOut)
		}
	}
	data, err := os.ReadFile(ext)
	if err != nil {
		t.Fatal(err)
	}
	// Every byte before mcpServers is as written; the mode is kept.
	if head := mcpCmdBefore[:strings.Index(mcpCmdBefore, `"mcpServers"`)]; !strings.HasPrefix(string(data), head) {
		t.Errorf("the keys around mcpServers changed:\n%s", data)
	}
	if fi, _ := os.Stat(ext); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	if !strings.Contains(string(data), "\n        \"memory\": {\n            \"enabled\": true,") {
		t.Errorf("the new server is not indented like the file (4 spaces):\n%s", data)
	}

	code, out, errOut := mcp("list", "--width", "200")
	if code != 0 {
		t.Fatalf("mcp list: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`(?m)^memory +stdio +\S.* +✔ connected · \d+ tools · \d`,
		`(?m)^files +stdio +\S.* +✔ connected · \d+ tools · \d`,
		`(?m)^closed +http +http://127.0.0.1:1/mcp +✗ failed\n +✗ \S`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("mcp list: no line matching %s in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Errorf("mcp list shows a header value:\n%s", out)
	}

	code, out, errOut = mcp("get", "closed")
	if code != 0 || !strings.Contains(out, "Authorization: ****") || strings.Contains(out, "s3cret") || !strings.Contains(out, "✗") {
		t.Errorf("mcp get closed: exit %d err %q; want the header masked and ✗:\n%s", code, errOut, out)
	}
	code, out, errOut = mcp("get", "memory")
	if code != 0 || !strings.Contains(out, "✔ connected") || !regexp.MustCompile(`(?m)^memory_read_graph +\S`).MatchString(out) ||
		!strings.Contains(out, "MEMORY_FILE_PATH=****") {
		t.Errorf("mcp get memory: exit %d err %q; want its state, its tools and the env value masked:\n%s", code, errOut, out)
	}

	if code, _, errOut := mcp("disable", "memory"); code != 0 {
		t.Fatalf("mcp disable: exit %d: %s", code, errOut)
	}
	if code, _, errOut := mcp("remove", "closed"); code != 0 {
		t.Fatalf("mcp remove: exit %d: %s", code, errOut)
	}
	code, out, _ = mcp("list")
	if code != 0 || !regexp.MustCompile(`(?m)^memory +stdio +\S.* +- disabled$`).MatchString(out) || strings.Contains(out, "closed") {
		t.Errorf("mcp list after disable and remove: exit %d:\n%s", code, out)
	}
	if code, _, errOut := mcp("enable", "memory"); code != 0 {
		t.Fatalf("mcp enable: exit %d: %s", code, errOut)
	}
	code, out, _ = mcp("list")
	if !regexp.MustCompile(`(?m)^memory +stdio +\S.* +✔ connected`).MatchString(out) {
		t.Errorf("mcp list after enable: exit %d:\n%s", code, out)
	}
}

// A key Antler does not know survives `mcp add` byte for byte; the command
// says that the file does not load as it is, and `mcp list` names the key
// and its line (exit 2).
func TestMCPCmd_addKeepsAnUnknownKey(t *testing.T) {
	node, memory := npmPeer(t, "server-memory")
	dir := t.TempDir()
	before := "{\n  \"x-team\": {\"owner\": \"ops\",   \"note\": \"kept\"},\n  \"mcpServers\": {}\n}\n"
	ext := writeFile(t, dir, "extensions_config.json", before)
	code, _, errOut := runCLI(t, nil, "--extensions", ext, "mcp", "add", "memory", "--", node, memory)
	if code != 0 {
		t.Fatalf("mcp add: exit %d: %s", code, errOut)
	}
	data, _ := os.ReadFile(ext)
	if !strings.HasPrefix(string(data), "{\n  \"x-team\": {\"owner\": \"ops\",   \"note\": \"kept\"},\n  \"mcpServers\": {\n    \"memory\": {") {
		t.Errorf("file after add:\n%s", data)
	}
	if !strings.Contains(errOut, "warning: "+ext+" does not load") || !strings.Contains(errOut, "x-team") {
		t.Errorf("stderr %q: want a warning naming the key", errOut)
	}
	code, _, errOut = runCLI(t, nil, "--extensions", ext, "mcp", "list")
	if code != 2 || !strings.Contains(errOut, ext+":2") {
		t.Errorf("mcp list: exit %d, stderr %q; want 2 and the key's file:line", code, errOut)
	}
}

func TestMCPCmd_usageErrors(t *testing.T) {
	dir := t.TempDir()
	ext := writeFile(t, dir, "extensions_config.json", "{\"mcpServers\": {\"memory\": {\"command\": \"x\"}}}\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"stdio without a command", []string{"add", "a"}, "needs a command"},
		{"http without a URL", []string{"add", "-t", "http", "a"}, "exactly one URL"},
		{"bad transport", []string{"add", "-t", "ws", "a", "u"}, `"ws" is not one of stdio, http, sse`},
		{"bad env", []string{"add", "a", "-e", "NOVALUE", "--", "x"}, "want KEY=VALUE"},
		{"header on stdio", []string{"add", "a", "-H", "A: b", "--", "x"}, "--header is for http and sse"},
		{"bad name", []string{"add", "a b", "--", "x"}, "letters, digits"},
		{"existing name", []string{"add", "memory", "--", "x"}, "already has a server"},
		{"get a typo", []string{"get", "memroy"}, `did you mean "memory"`},
		{"remove a typo", []string{"remove", "memroy"}, `did you mean "memory"`},
		{"unknown subcommand", []string{"lst"}, `unknown command "lst" for "antler mcp" (did you mean "list"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, nil, append([]string{"--extensions", ext, "mcp"}, tt.args...)...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.want)
			}
		})
	}
	if data, _ := os.ReadFile(ext); string(data) != "{\"mcpServers\": {\"memory\": {\"command\": \"x\"}}}\n" {
		t.Errorf("a refused command changed the file:\n%s", data)
	}
}
