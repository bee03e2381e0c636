package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/config"
)

// `antler mcp add --user` writes a server only that user's runs, tool
// lists and mcp lists see; --user on a shared server sets that user's
// values for its secrets.
func TestMCPAddUserServerIsThatUsersOnly(t *testing.T) {
	cfg, dir := mcpFixture(t, false)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, nil, append([]string{"--config", cfg, "--home", dir}, args...)...)
	}
	code, out, errOut := cli("mcp", "add", "--user", "alice", "mine", "-e", "ANTLER_CLI_TEST_MCP_SERVER=1", "--", exe)
	if code != 0 || !strings.HasPrefix(out, `Added stdio MCP server "mine" for user alice`) {
		t.Fatalf("add: exit %d out %q err %q", code, out, errOut)
	}
	path := filepath.Join(dir, "users", "alice", config.UserMCPFileName)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("user file: %v %v", fi, err)
	}
	if ext, _ := os.ReadFile(filepath.Join(dir, "extensions_config.json")); strings.Contains(string(ext), "mine") {
		t.Errorf("the shared file got the user's server:\n%s", ext)
	}

	tools := func(user string) string {
		t.Helper()
		code, out, errOut := cli("--user", user, "tools", "list", "--json")
		if code != 0 {
			t.Fatalf("tools list --user %s: exit %d: %s", user, code, errOut)
		}
		var list []toolJSON
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range list {
			if e.Source == "mcp" {
				names = append(names, e.Name)
			}
		}
		return strings.Join(names, " ")
	}
	if got := tools("alice"); got != "fake_get_weather fake_list_issues mine_get_weather mine_list_issues" {
		t.Errorf("alice's MCP tools = %q", got)
	}
	if got := tools("bob"); got != "fake_get_weather fake_list_issues" {
		t.Errorf("bob's MCP tools = %q", got)
	}
	for _, tc := range []struct {
		args []string
		mine bool
	}{
		{[]string{"--user", "alice", "mcp", "list"}, true},
		{[]string{"--user", "bob", "mcp", "list"}, false},
		{[]string{"mcp", "list"}, false},
	} {
		code, out, errOut := cli(tc.args...)
		if code != 0 || strings.Contains(out, "mine") != tc.mine || !strings.Contains(out, "fake") {
			t.Errorf("%v: exit %d, out %q err %q; want mine listed = %v", tc.args, code, out, errOut, tc.mine)
		}
	}

	code, out, errOut = cli("--user", "alice", "mcp", "get", "mine")
	if code != 0 || !strings.Contains(out, "mine ("+path+")") || !strings.Contains(out, "get_weather") || !strings.Contains(out, "env:") {
		t.Errorf("mcp get --user alice mine: exit %d out %q err %q", code, out, errOut)
	}
	if code, _, errOut := cli("--user", "bob", "mcp", "get", "mine"); code == 0 || !strings.Contains(errOut, `no server "mine"`) {
		t.Errorf("mcp get --user bob mine: exit %d err %q", code, errOut)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		text string
	}{
		{"undeclared key of a shared server", []string{"mcp", "add", "--user", "alice", "fake", "-e", "LD_PRELOAD=/x.so"}, 2, "declares no such key"},
		{"a shared server takes values only", []string{"mcp", "add", "--user", "alice", "fake", "--", exe}, 2, "give only --header or --env values"},
		{"no $VAR in a user's file", []string{"mcp", "add", "--user", "alice", "--transport", "http", "web", "http://127.0.0.1:1/mcp", "-H", "Authorization: $TOKEN"}, 2, "does not resolve $VAR"},
		{"another user's server", []string{"mcp", "remove", "--user", "bob", "mine"}, 2, `user bob has no MCP server "mine"`},
		{"a duplicate", []string{"mcp", "add", "--user", "alice", "mine", "--", exe}, 2, "already has an MCP server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := cli(tc.args...)
			if code != tc.code || !strings.Contains(out+errOut, tc.text) {
				t.Errorf("exit %d out %q err %q; want exit %d and %q", code, out, errOut, tc.code, tc.text)
			}
		})
	}
	code, out, errOut = cli("mcp", "add", "--user", "alice", "fake", "-e", "ANTLER_CLI_TEST_MCP_SERVER=1")
	if code != 0 || !strings.Contains(out, `Set user alice's values of ANTLER_CLI_TEST_MCP_SERVER for shared MCP server "fake"`) {
		t.Errorf("credential: exit %d out %q err %q", code, out, errOut)
	}
	code, out, errOut = cli("mcp", "remove", "--user", "alice", "mine")
	if code != 0 || !strings.Contains(out, `Removed user alice's MCP server "mine"`) {
		t.Errorf("remove: exit %d out %q err %q", code, out, errOut)
	}
	if got := tools("alice"); got != "fake_get_weather fake_list_issues" {
		t.Errorf("alice's MCP tools after remove = %q", got)
	}
}
