package gateway_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/gateway"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/tool"
)

// lateMCP is an MCP source whose Manager is made once the gateway's
// options (extensions path, layout) are known.
type lateMCP struct{ m *mcptools.Manager }

func (l *lateMCP) Tools(ctx context.Context) ([]*tool.Tool, error) { return l.m.Tools(ctx) }
func (l *lateMCP) ToolsFor(ctx context.Context, user string) ([]*tool.Tool, error) {
	return l.m.ToolsFor(ctx, user)
}

// newUserMCPEnv is a gateway with alice and bob (users) and root (an
// admin), a shared in-memory server "shared", a shared server "gh" whose
// Authorization comes from an unset variable, and the users' MCP files
// read by both the routes and the runs' MCP source.
func newUserMCPEnv(t *testing.T) *env { return newUserMCPEnvWith(t, nil) }

func newUserMCPEnvWith(t *testing.T, m model.ChatModel) *env {
	t.Helper()
	echo := func(name string) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
		})
		return s
	}
	servers := map[string]*mcp.Server{"shared": echo("shared"), "notes": echo("notes")}
	dial := func(ctx context.Context, s config.MCPServer) (mcp.Transport, error) {
		srv, ok := servers[s.Name]
		if !ok {
			return nil, nil
		}
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	late := &lateMCP{}
	files := &config.UserMCPFiles{}
	e := newEnv(t, envOptions{mcp: late, model: m,
		extensions: `{"mcpServers": {
		  "shared": {"type": "http", "url": "http://127.0.0.1:1/unused"},
		  "gh": {"type": "http", "url": "http://127.0.0.1:1/unused", "headers": {"Authorization": "$ANTLER_TEST_UNSET_GH_AUTH"}}
		}, "skills": {}}`,
		tokens: []config.GatewayToken{{Token: "alice-tok", UserID: "alice"}, {Token: "bob-tok", UserID: "bob"},
			{Token: "root-tok", UserID: "root", Admin: true}},
		gateway: func(o *gateway.Options) {
			files.Dir = o.Layout.UserDir
			o.UserMCP = files
			late.m = mcptools.New(mcptools.Options{Extensions: config.NewExtensionsCache(o.ExtensionsPath), UserFiles: files, Dial: dial})
			t.Cleanup(func() { late.m.Close() })
		}})
	return e
}

func toolNames(e *env, token, query string) []string {
	e.t.Helper()
	var tools []map[string]any
	e.json("GET", "/api/tools"+query, token, nil, 200, &tools)
	var out []string
	for _, tl := range tools {
		out = append(out, tl["name"].(string))
	}
	return out
}

func TestUserMCPServersAreTheCallersOnly(t *testing.T) {
	e := newUserMCPEnv(t)
	notes := map[string]any{"type": "http", "url": "http://notes.example/mcp", "headers": map[string]any{"X-Key": "alice-key"}}
	e.json("PUT", "/api/mcp/user/servers/notes", "alice-tok", notes, 200, nil)

	var got struct {
		MCPServers    map[string]map[string]any `json:"mcp_servers"`
		Credentials   map[string]any            `json:"credentials"`
		SharedServers []string                  `json:"shared_servers"`
	}
	e.json("GET", "/api/mcp/user", "alice-tok", nil, 200, &got)
	if h := got.MCPServers["notes"]["headers"].(map[string]any)["X-Key"]; h != "***" {
		t.Errorf("alice's header shown as %v, want masked", h)
	}
	if !slices.Equal(got.SharedServers, []string{"gh", "shared"}) {
		t.Errorf("shared_servers = %v", got.SharedServers)
	}
	got.MCPServers = nil
	e.json("GET", "/api/mcp/user", "bob-tok", nil, 200, &got)
	if len(got.MCPServers) != 0 {
		t.Errorf("bob sees %v", got.MCPServers)
	}

	// Runs (the tool list of the caller's run) see the caller's servers only.
	if names := toolNames(e, "alice-tok", ""); !slices.Contains(names, "notes_echo") || !slices.Contains(names, "shared_echo") {
		t.Errorf("alice's tools = %v", names)
	}
	if names := toolNames(e, "bob-tok", ""); slices.Contains(names, "notes_echo") || !slices.Contains(names, "shared_echo") {
		t.Errorf("bob's tools = %v", names)
	}
	// "***" keeps the stored value.
	notes["headers"] = map[string]any{"X-Key": "***"}
	e.json("PUT", "/api/mcp/user/servers/notes", "alice-tok", notes, 200, nil)
	data, err := os.ReadFile(filepath.Join(e.home, "users", "alice", config.UserMCPFileName))
	if err != nil || !strings.Contains(string(data), "alice-key") {
		t.Errorf("stored file: %s, %v", data, err)
	}

	for _, tc := range []struct {
		name, method, path, token string
		body                      any
		want                      int
		text                      string
	}{
		{"stdio by a user", "PUT", "/api/mcp/user/servers/local", "alice-tok", map[string]any{"command": "npx", "args": []string{"x"}}, 403, "only an admin may add a stdio MCP server"},
		{"stdio by an admin, policy", "PUT", "/api/mcp/user/servers/local", "root-tok", map[string]any{"command": "bash"}, 400, "disallowed stdio command"},
		{"a user's loopback url", "PUT", "/api/mcp/user/servers/near", "alice-tok", map[string]any{"type": "http", "url": "http://127.0.0.1:8080/mcp"}, 400, "Refusing to connect to a private, loopback, or metadata address"},
		{"a user's metadata url", "PUT", "/api/mcp/user/servers/near", "alice-tok", map[string]any{"type": "sse", "url": "http://169.254.169.254/sse"}, 400, "Refusing to connect to a private"},
		{"a shared name", "PUT", "/api/mcp/user/servers/shared", "alice-tok", notes, 409, "is a shared server"},
		{"invalid entry", "PUT", "/api/mcp/user/servers/bad", "alice-tok", map[string]any{"type": "http"}, 400, "requires 'url' field"},
		{"unknown key", "PUT", "/api/mcp/user/servers/bad", "alice-tok", map[string]any{"type": "http", "urll": "x"}, 400, "mcpServers.bad.urll"},
		{"bob deletes alice's", "DELETE", "/api/mcp/user/servers/notes", "bob-tok", nil, 404, "not found"},
		{"credential for no server", "PUT", "/api/mcp/user/credentials/nope", "alice-tok", map[string]any{}, 404, "no shared MCP server 'nope'"},
		{"credential undeclared key", "PUT", "/api/mcp/user/credentials/gh", "alice-tok", map[string]any{"headers": map[string]string{"X-Other": "v"}}, 400, "declares no such key"},
		{"credential masked without value", "PUT", "/api/mcp/user/credentials/gh", "alice-tok", map[string]any{"headers": map[string]string{"Authorization": "***"}}, 400, "masked value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.do(tc.method, tc.path, tc.token, tc.body)
			defer resp.Body.Close()
			var b strings.Builder
			_, _ = ioCopy(&b, resp)
			if resp.StatusCode != tc.want || !strings.Contains(b.String(), tc.text) {
				t.Errorf("status %d %s, want %d containing %q", resp.StatusCode, b.String(), tc.want, tc.text)
			}
		})
	}

	e.json("PUT", "/api/mcp/user/credentials/gh", "alice-tok", map[string]any{"headers": map[string]string{"Authorization": "Bearer alice"}}, 200, nil)
	fi, err := os.Stat(filepath.Join(e.home, "users", "alice", config.UserMCPFileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	e.json("GET", "/api/mcp/user", "alice-tok", nil, 200, &got)
	if c := got.Credentials["gh"].(map[string]any)["headers"].(map[string]any)["Authorization"]; c != "***" {
		t.Errorf("credential shown as %v", c)
	}
	if e.status("DELETE", "/api/mcp/user/servers/notes", "alice-tok", nil) != 204 || e.status("DELETE", "/api/mcp/user/servers/notes", "alice-tok", nil) != 404 {
		t.Error("delete: want 204 then 404")
	}
	if names := toolNames(e, "alice-tok", ""); slices.Contains(names, "notes_echo") {
		t.Errorf("alice's tools after delete = %v", names)
	}
}

// PUT /api/agents sets an agent's MCP servers, checked against the
// caller's servers; the agent's runs then bind only those.
func TestAgentsAPIMCPPlugins(t *testing.T) {
	e := newUserMCPEnv(t)
	e.json("PUT", "/api/mcp/user/servers/notes", "alice-tok", map[string]any{"type": "http", "url": "http://notes.example/mcp"}, 200, nil)
	var a map[string]any
	e.json("POST", "/api/agents", "alice-tok", map[string]any{"name": "researcher", "mcp_plugins": []string{"notes"}}, 201, &a)
	if !slices.Equal(toAnyStrings(a["mcp_plugins"]), []string{"notes"}) {
		t.Errorf("created agent = %v", a)
	}
	names := toolNames(e, "alice-tok", "?agent=researcher")
	if !slices.Contains(names, "notes_echo") || slices.Contains(names, "shared_echo") {
		t.Errorf("researcher's tools = %v, want notes_echo and not shared_echo", names)
	}
	e.json("PUT", "/api/agents/researcher", "alice-tok", map[string]any{"mcp_plugins": []string{"shared"}}, 200, &a)
	names = toolNames(e, "alice-tok", "?agent=researcher")
	if slices.Contains(names, "notes_echo") || !slices.Contains(names, "shared_echo") {
		t.Errorf("after PUT: researcher's tools = %v", names)
	}
	if names := toolNames(e, "alice-tok", ""); !slices.Contains(names, "notes_echo") || !slices.Contains(names, "shared_echo") {
		t.Errorf("the lead agent's tools = %v, want every server", names)
	}
	// bob has no server "notes": his agent cannot name it.
	resp := e.do("POST", "/api/agents", "bob-tok", map[string]any{"name": "researcher", "mcp_plugins": []string{"notes"}})
	var b strings.Builder
	_, _ = ioCopy(&b, resp)
	resp.Body.Close()
	if resp.StatusCode != 422 || !strings.Contains(b.String(), "Unknown MCP server(s) in mcp_plugins: notes. Configured servers: gh, shared.") {
		t.Errorf("bob: %d %s", resp.StatusCode, b.String())
	}
	e.json("PUT", "/api/agents/researcher", "alice-tok", map[string]any{"mcp_tools": map[string][]string{"notes": {"echo"}}}, 422, nil)
}

func toAnyStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func ioCopy(b *strings.Builder, resp *http.Response) (int64, error) { return io.Copy(b, resp.Body) }

// A run of alice's calls her own server; the same call in bob's run finds
// no such tool (it was never bound).
func TestUserMCPServerInRuns(t *testing.T) {
	answer := func(req *model.Request) modeltest.Turn {
		return modeltest.Turn{Text: "tool said: " + modeltest.LastMessage(req).Content}
	}
	call := modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "call_n", Name: "notes_echo", Arguments: []byte(`{}`)}}}
	e := newUserMCPEnvWith(t, modeltest.New(call, modeltest.Turn{Func: answer}, call, modeltest.Turn{Func: answer}))
	e.json("PUT", "/api/mcp/user/servers/notes", "alice-tok", map[string]any{"type": "http", "url": "http://notes.example/mcp"}, 200, nil)
	for _, tc := range []struct{ token, want string }{
		{"alice-tok", "tool said: notes"},
		{"bob-tok", "tool said: Error: "},
	} {
		tid := uuid.NewString()
		resp := e.startStream(tid, tc.token, runBody(tid, humanInput("use notes", nil)))
		tr, err := readAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var final string
		for _, id := range tr.Order {
			if m := tr.Messages[id]; m["type"] == "ai" {
				if c, _ := m["content"].(string); c != "" {
					final = c
				}
			}
		}
		if !strings.HasPrefix(final, tc.want) {
			t.Errorf("%s: final answer %q, want it to start with %q", tc.token, final, tc.want)
		}
	}
}
