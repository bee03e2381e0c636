package mcptools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// userFiles is a fixed set of users' MCP files.
type userFiles map[string]*config.UserMCP

func (f userFiles) Load(user string) (*config.UserMCP, error) {
	if u := f[user]; u != nil {
		return u, nil
	}
	return &config.UserMCP{}, nil
}

func parseUser(t *testing.T, user, data string) *config.UserMCP {
	t.Helper()
	u, err := config.ParseUserMCP(user+"/mcp_config.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func findTool(tools []*tool.Tool, name string) *tool.Tool {
	for _, t := range tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// userCall calls tl as user; a nil tl (not discovered) fails the test.
func userCall(t *testing.T, tl *tool.Tool, user, args string) string {
	t.Helper()
	if tl == nil {
		t.Fatalf("userCall: nil tool (not discovered)")
	}
	res, err := tl.Handler(t.Context(), &tool.Call{ID: "c", UserID: user}, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return resultText(res)
}

func TestUserOwnServersAreSeenOnlyByTheirUser(t *testing.T) {
	ext := parseExt(t, `{"shared": `+memServerJSON("")+`}`)
	files := userFiles{"alice": parseUser(t, "alice", `{"mcpServers": {"notes": `+memServerJSON("")+`}}`)}
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), UserFiles: files,
		Dial: memServers{"shared": newTestServer(), "notes": newTestServer()}.dial})

	tests := []struct {
		user string
		want []string
	}{
		{"alice", []string{"shared_echo", "shared_sleep", "notes_echo", "notes_sleep"}},
		{"bob", []string{"shared_echo", "shared_sleep"}},
		{"", []string{"shared_echo", "shared_sleep"}},
	}
	var aliceTools []*tool.Tool
	for _, tt := range tests {
		t.Run("user "+tt.user, func(t *testing.T) {
			tools, err := m.ToolsFor(t.Context(), tt.user)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(tools)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if tt.user == "alice" {
				aliceTools = tools
			}
		})
	}
	if all, _ := m.Tools(t.Context()); len(all) != 2 {
		t.Errorf("Tools (the shared view) = %v", names(all))
	}
	again, _ := m.ToolsFor(t.Context(), "alice")
	if len(again) == 0 || &again[0] != &aliceTools[0] {
		t.Error("ToolsFor returned a new slice although nothing changed")
	}
	notes := findTool(aliceTools, "notes_echo")
	if got := userCall(t, notes, "alice", `{"message":"hi"}`); got != "Echo: hi" {
		t.Errorf("alice's call = %q", got)
	}
	if got := userCall(t, notes, "bob", `{"message":"hi"}`); !strings.Contains(got, "belongs to another user's configuration") {
		t.Errorf("bob's call of alice's server = %q", got)
	}
}

// TestUserCredentialsStdioProcessPerUser: one shared stdio definition
// whose env value is each user's own; each user's process is its own,
// even with process_scope shared, and a user without a value gets none.
func TestUserCredentialsStdioProcessPerUser(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exeJSON, _ := json.Marshal(exe)
	ext := parseExt(t, `{"fake": {"command": `+string(exeJSON)+`, "process_scope": "shared",
	  "env": {"MCPTOOLS_FAKE": "serve", "SERVICE_TOKEN": "$ANTLER_TEST_UNSET_SERVICE_TOKEN"}}}`)
	if ext.MCPServers["fake"].Err == nil {
		t.Fatal("the shared server should be unusable without a value")
	}
	files := userFiles{
		"alice": parseUser(t, "alice", `{"credentials": {"fake": {"env": {"SERVICE_TOKEN": "alice-secret"}}}}`),
		"bob":   parseUser(t, "bob", `{"credentials": {"fake": {"env": {"SERVICE_TOKEN": "bob-secret"}}}}`),
	}
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), UserFiles: files})

	if carol, err := m.ToolsFor(t.Context(), "carol"); err != nil || len(carol) != 0 {
		t.Fatalf("carol (no credentials) = %v, %v", names(carol), err)
	}
	pids := map[string]string{}
	for _, user := range []string{"alice", "bob"} {
		tools, err := m.ToolsFor(t.Context(), user)
		if err != nil {
			t.Fatal(err)
		}
		env, pid := findTool(tools, "fake_env"), findTool(tools, "fake_pid")
		if env == nil || pid == nil {
			t.Fatalf("%s: tools = %v", user, names(tools))
		}
		if got := userCall(t, env, user, `{"name":"SERVICE_TOKEN"}`); got != user+"-secret" {
			t.Errorf("%s's server sees SERVICE_TOKEN = %q", user, got)
		}
		pids[user] = userCall(t, pid, user, `{}`)
		// The same user's threads share the user's process (shared scope).
		res, _ := pid.Handler(t.Context(), &tool.Call{ID: "c", UserID: user, ThreadID: "t1"}, json.RawMessage(`{}`))
		if resultText(res) != pids[user] {
			t.Errorf("%s: another thread got process %s, want %s", user, resultText(res), pids[user])
		}
	}
	if pids["alice"] == pids["bob"] {
		t.Errorf("alice and bob share process %s", pids["alice"])
	}
}

// TestUserCredentialsHTTPHeaders: one shared http definition, each
// user's Authorization value on that user's requests only.
func TestUserCredentialsHTTPHeaders(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "whoami", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Returns the Authorization header."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return text(req.Extra.Header.Get("Authorization")), nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	ext := parseExt(t, `{"gh": {"type": "http", "url": "`+hs.URL+`", "headers": {"Authorization": "Bearer shared"}}}`)
	files := userFiles{"alice": parseUser(t, "alice", `{"credentials": {"gh": {"headers": {"Authorization": "Bearer alice"}}}}`)}
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), UserFiles: files})

	for _, tt := range []struct{ user, want string }{{"alice", "Bearer alice"}, {"bob", "Bearer shared"}, {"alice", "Bearer alice"}} {
		tools, err := m.ToolsFor(t.Context(), tt.user)
		if err != nil {
			t.Fatal(err)
		}
		who := findTool(tools, "gh_whoami")
		if who == nil {
			t.Fatalf("%s: tools = %v", tt.user, names(tools))
		}
		if got := userCall(t, who, tt.user, `{}`); got != tt.want {
			t.Errorf("%s: the server saw Authorization %q, want %q", tt.user, got, tt.want)
		}
	}
}

func TestUserViewsBoundAndReset(t *testing.T) {
	ext := parseExt(t, `{}`)
	files := userFiles{}
	dial := memServers{}
	for _, u := range []string{"u1", "u2", "u3"} {
		files[u] = parseUser(t, u, `{"mcpServers": {"`+u+`": `+memServerJSON("")+`}}`)
		dial[u] = newTestServer()
	}
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), UserFiles: files, Dial: dial.dial, MaxUserViews: 2})
	for _, u := range []string{"u1", "u2", "u3", "u1"} {
		tools, err := m.ToolsFor(t.Context(), u)
		if err != nil || len(tools) != 2 || tools[0].Name != u+"_echo" {
			t.Fatalf("%s: %v, %v", u, names(tools), err)
		}
	}
	old, _ := m.ToolsFor(t.Context(), "u2")
	m.Reset()
	tools, err := m.ToolsFor(t.Context(), "u2")
	if err != nil || len(tools) != 2 {
		t.Fatalf("after Reset: %v, %v", names(tools), err)
	}
	// A tool of the closed view, still bound by a run, fails cleanly.
	if got := userCall(t, old[0], "u2", `{"message":"x"}`); !strings.Contains(got, "were closed meanwhile") {
		t.Errorf("call of a closed view = %q", got)
	}
	if got := userCall(t, tools[0], "u2", `{"message":"x"}`); got != "Echo: x" {
		t.Errorf("call of the new view = %q", got)
	}
}
