package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseExtensionsExample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "extensions_config.example.json"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := ParseExtensions("extensions_config.json", data, nil)
	if err != nil {
		t.Fatalf("ParseExtensions: %v", err)
	}
	if diff := cmp.Diff([]string{"docs", "github", "postgres", "reports"}, e.ServerNames()); diff != "" {
		t.Errorf("ServerNames (-want +got):\n%s", diff)
	}
	if len(e.EnabledServers()) != 0 {
		t.Errorf("EnabledServers = %v, want none", e.EnabledServers())
	}
	// Disabled servers: missing variables are silent and not errors.
	if len(e.Warnings) != 0 {
		t.Errorf("Warnings = %v", e.Warnings)
	}
	for _, name := range e.ServerNames() {
		if err := e.MCPServers[name].Err; err != nil {
			t.Errorf("server %s: Err = %v", name, err)
		}
	}
	gh := e.MCPServers["github"]
	if gh.Type != "stdio" || gh.Command != "npx" || gh.InitTimeout() != time.Minute || gh.CallTimeout() != time.Minute || !gh.ToolNamePrefix {
		t.Errorf("github = %+v", gh)
	}
	pg := e.MCPServers["postgres"]
	if pg.Type != "stdio" {
		t.Errorf("postgres type (from \"transport\") = %q", pg.Type)
	}
	if diff := cmp.Diff(&Routing{Mode: "prefer", Priority: 50, Keywords: []string{"database", "SQL"}}, pg.Routing); diff != "" {
		t.Errorf("postgres routing (-want +got):\n%s", diff)
	}
	if _, ok := pg.Tools["query"]; !ok {
		t.Error("postgres per-tool overrides lost")
	}
	rep := e.MCPServers["reports"]
	if rep.SessionInitTimeout != nil || rep.InitTimeout() != 0 {
		t.Errorf("reports session_init_timeout null = %v, want no bound", rep.SessionInitTimeout)
	}
	if len(rep.TaskToolsets) != 1 || rep.TaskToolsets[0].SubmitTool != "submit_report" {
		t.Errorf("reports TaskToolsets = %+v", rep.TaskToolsets)
	}
	if e.SkillEnabled("deep-research") || !e.SkillEnabled("data-analysis") || !e.SkillEnabled("not-listed") {
		t.Errorf("Skills = %+v", e.Skills)
	}
	if diff := cmp.Diff([]string{"my_package.mcp.auth:build_auth_interceptor"}, e.MCPInterceptors); diff != "" {
		t.Errorf("MCPInterceptors (-want +got):\n%s", diff)
	}
}

func TestParseExtensionsServers(t *testing.T) {
	f64 := func(v float64) *float64 { return &v }
	tests := []struct {
		name    string
		json    string
		env     map[string]string
		want    MCPServer // compared without Err and Tools
		wantErr string    // substring of the server's Err, "" for none
		warn    []string
	}{
		{
			name: "defaults",
			json: `{"command": "uvx", "args": ["srv"]}`,
			want: MCPServer{ProcessScope: "thread", Enabled: true, Type: "stdio", Command: "uvx", Args: []string{"srv"}, ToolNamePrefix: true, SessionInitTimeout: f64(60)},
		},
		{
			name: "transport alias",
			json: `{"transport": "sse", "url": "http://h/sse"}`,
			want: MCPServer{ProcessScope: "thread", Enabled: true, Type: "sse", URL: "http://h/sse", ToolNamePrefix: true, SessionInitTimeout: f64(60)},
		},
		{
			name: "type wins over transport",
			json: `{"type": "http", "transport": "sse", "url": "http://h/mcp", "tool_name_prefix": false, "tool_call_timeout": 5}`,
			want: MCPServer{ProcessScope: "thread", Enabled: true, Type: "http", URL: "http://h/mcp", ToolCallTimeout: f64(5), SessionInitTimeout: f64(60)},
		},
		{
			name: "env and cwd and disabled_tools resolved",
			json: `{"command": "$BIN", "env": {"TOKEN": "$TOKEN", "PLAIN": "x"}, "cwd": "/w", "disabled_tools": ["drop"]}`,
			env:  map[string]string{"BIN": "/bin/srv", "TOKEN": "t0k"},
			want: MCPServer{ProcessScope: "thread", Enabled: true, Type: "stdio", Command: "/bin/srv", Env: map[string]string{"TOKEN": "t0k", "PLAIN": "x"}, Cwd: "/w", DisabledTools: []string{"drop"}, ToolNamePrefix: true, SessionInitTimeout: f64(60)},
		},
		{
			name:    "missing var in headers is a server error",
			json:    `{"type": "http", "url": "http://h", "headers": {"Authorization": "$API_TOKEN"}}`,
			want:    MCPServer{ProcessScope: "thread", Enabled: true, Type: "http", URL: "http://h", Headers: map[string]string{"Authorization": ""}, ToolNamePrefix: true, SessionInitTimeout: f64(60), Unset: []string{"headers.Authorization"}},
			wantErr: "mcpServers.s.headers.Authorization: environment variable API_TOKEN is not set",
		},
		{
			name:    "missing var in env is a server error",
			json:    `{"command": "c", "env": {"K": "$K"}}`,
			want:    MCPServer{ProcessScope: "thread", Enabled: true, Type: "stdio", Command: "c", Env: map[string]string{"K": ""}, ToolNamePrefix: true, SessionInitTimeout: f64(60), Unset: []string{"env.K"}},
			wantErr: "mcpServers.s.env.K: environment variable K is not set",
		},
		{
			name: "missing var elsewhere is a warning",
			json: `{"command": "c", "args": ["--db", "$DB_URL"]}`,
			want: MCPServer{ProcessScope: "thread", Enabled: true, Type: "stdio", Command: "c", Args: []string{"--db", ""}, ToolNamePrefix: true, SessionInitTimeout: f64(60)},
			warn: []string{"x.json: mcpServers.s.args[1]: environment variable DB_URL is not set; using an empty value"},
		},
		{
			name: "disabled server with missing header var",
			json: `{"enabled": false, "type": "http", "url": "http://h", "headers": {"X": "$NOPE"}}`,
			want: MCPServer{ProcessScope: "thread", Type: "http", URL: "http://h", Headers: map[string]string{"X": ""}, ToolNamePrefix: true, SessionInitTimeout: f64(60)},
		},
		{
			name:    "stdio without command",
			json:    `{"type": "stdio"}`,
			want:    MCPServer{ProcessScope: "thread", Enabled: true, Type: "stdio", ToolNamePrefix: true, SessionInitTimeout: f64(60)},
			wantErr: "MCP server 's' with stdio transport requires 'command' field",
		},
		{
			name:    "http without url",
			json:    `{"type": "http"}`,
			want:    MCPServer{ProcessScope: "thread", Enabled: true, Type: "http", ToolNamePrefix: true, SessionInitTimeout: f64(60)},
			wantErr: "MCP server 's' with http transport requires 'url' field",
		},
		{
			name:    "unsupported transport",
			json:    `{"type": "websocket", "url": "ws://h"}`,
			want:    MCPServer{ProcessScope: "thread", Enabled: true, Type: "websocket", URL: "ws://h", ToolNamePrefix: true, SessionInitTimeout: f64(60)},
			wantErr: "MCP server 's' has unsupported transport type: websocket",
		},
		{
			name:    "wrong field type",
			json:    `{"command": "c", "args": "not-a-list"}`,
			want:    MCPServer{Enabled: true, Type: "stdio", ToolNamePrefix: true},
			wantErr: "mcpServers.s.args: expected list",
		},
		{
			name: "routing priority clamped",
			json: `{"command": "c", "routing": {"mode": "prefer", "priority": 500}}`,
			want: MCPServer{ProcessScope: "thread", Enabled: true, Type: "stdio", Command: "c", ToolNamePrefix: true, SessionInitTimeout: f64(60), Routing: &Routing{Mode: "prefer", Priority: 100}},
		},
		{
			name: "oauth defaults",
			json: `{"type": "http", "url": "http://h", "oauth": {"enabled": true, "token_url": "https://auth/token", "client_id": "$CID", "client_secret": "s", "scope": null}}`,
			env:  map[string]string{"CID": "id"},
			want: MCPServer{ProcessScope: "thread", Enabled: true, Type: "http", URL: "http://h", ToolNamePrefix: true, SessionInitTimeout: f64(60), OAuth: &OAuth{
				Enabled: true, TokenURL: "https://auth/token", GrantType: "client_credentials", ClientID: "id", ClientSecret: "s",
				TokenField: "access_token", TokenTypeField: "token_type", ExpiresInField: "expires_in", DefaultTokenType: "Bearer", RefreshSkewSeconds: 60,
			}},
		},
		{
			name:    "not an object",
			json:    `["c"]`,
			want:    MCPServer{Enabled: true, Type: "stdio", ToolNamePrefix: true},
			wantErr: "mcpServers.s: must be an object",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `{"mcpServers": {"s": ` + tt.json + `, "ok": {"command": "fine"}}}`
			e, err := ParseExtensions("x.json", []byte(doc), envOf(tt.env))
			if err != nil {
				t.Fatalf("ParseExtensions: %v", err)
			}
			got := e.MCPServers["s"]
			tt.want.Name = "s"
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(MCPServer{}, "Err", "Tools")); diff != "" {
				t.Errorf("server (-want +got):\n%s", diff)
			}
			switch {
			case tt.wantErr == "" && got.Err != nil:
				t.Errorf("Err = %v, want none", got.Err)
			case tt.wantErr != "" && (got.Err == nil || !strings.Contains(got.Err.Error(), tt.wantErr)):
				t.Errorf("Err = %v, want substring %q", got.Err, tt.wantErr)
			}
			if ok := e.MCPServers["ok"]; ok.Err != nil || ok.Command != "fine" {
				t.Errorf("other server affected: %+v", ok)
			}
			if diff := cmp.Diff(tt.warn, e.Warnings); diff != "" {
				t.Errorf("Warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseExtensionsErrors(t *testing.T) {
	tests := []struct {
		name string
		json string
		want string
	}{
		{"syntax error line", "{\n  \"mcpServers\": {\n    \"a\": {,}\n  }\n}\n", "x.json:3: invalid JSON"},
		{"truncated", "{\n  \"mcpServers\": {\n", "x.json:3: invalid JSON"},
		{"top level array", "[1, 2]", "x.json:1: expected mapping"},
		{"mcpServers is a list", "{\n  \"skills\": {},\n  \"mcpServers\": []\n}", "x.json:3: mcpServers: expected mapping"},
		{"skills wrong type", "{\"skills\": {\"a\": {\"enabled\": \"yes\"}}}", "x.json:1: skills"},
		{"middlewares wrong type", "{\"middlewares\": 3}", "x.json:1: middlewares: must be a string or a list of strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseExtensions("x.json", []byte(tt.json), nil)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error = %v, want *Error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want substring %q", err, tt.want)
			}
		})
	}
}

func TestParseExtensionsStringOrList(t *testing.T) {
	e, err := ParseExtensions("x.json", []byte(`{"middlewares": "a:B", "mcpInterceptors": ["m:f", "n:g"], "mcpServers": null}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a:B"}, e.Middlewares); diff != "" {
		t.Errorf("Middlewares (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"m:f", "n:g"}, e.MCPInterceptors); diff != "" {
		t.Errorf("MCPInterceptors (-want +got):\n%s", diff)
	}
}

func TestLoadExtensions(t *testing.T) {
	e, err := LoadExtensions("")
	if err != nil || len(e.MCPServers) != 0 || e.Path != "" {
		t.Errorf("LoadExtensions(\"\") = %+v, %v", e, err)
	}
	dir := t.TempDir()
	_, err = LoadExtensions(filepath.Join(dir, "missing.json"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	path := filepath.Join(dir, "extensions_config.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "c"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err = LoadExtensions(path)
	if err != nil || e.Path != path || e.MCPServers["a"].Command != "c" {
		t.Errorf("LoadExtensions = %+v, %v", e, err)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadExtensions(path); err != nil {
		t.Errorf("empty object: %v", err)
	}
}
