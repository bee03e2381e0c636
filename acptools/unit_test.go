package acptools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
)

func TestDescriptionAndSchema(t *testing.T) {
	cfg := config.Default()
	cfg.ACPAgents = map[string]config.ACPAgent{
		"codex":  {Command: "codex-acp", Description: "Codex CLI for coding tasks"},
		"claude": {Command: "claude-agent-acp", Description: "Claude Code"},
	}
	inv, err := New(Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := inv.Tool(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := "Invoke an external ACP-compatible agent and return its final response.\n\n" +
		"Available agents:\n- claude: Claude Code\n- codex: Codex CLI for coding tasks\n\n" +
		"IMPORTANT: ACP agents operate in their own independent workspace. Do NOT include /mnt/user-data paths in the prompt. " +
		"Give the agent a self-contained task description — it will produce results in its own workspace. " +
		"After the agent completes, its output files are accessible at /mnt/acp-workspace/ (read-only)."
	if diff := cmp.Diff(want, tl.Description); diff != "" {
		t.Errorf("description (-want +got):\n%s", diff)
	}
	if tl.Name != "invoke_acp_agent" {
		t.Errorf("name = %q", tl.Name)
	}
	res, err := tl.Handler(t.Context(), nil, []byte(`{"agent": "codex"}`))
	if err != nil || !res.IsError || !strings.Contains(res.TextContent(), "prompt") {
		t.Errorf("missing prompt: %v %q", err, res.TextContent())
	}
	if _, err := inv.Tool(t.Context(), config.Default()); err == nil {
		t.Error("Tool without agents succeeded")
	}
}

// Conversion of the enabled servers; disabled ones
// are filtered; any invalid enabled server fails the whole list.
func TestMCPServerConversion(t *testing.T) {
	parse := func(t *testing.T, js string) *config.Extensions {
		t.Helper()
		ext, err := config.ParseExtensions("extensions_config.json", []byte(js), func(k string) (string, bool) {
			if k == "TOKEN" {
				return "s3cret", true
			}
			return "", false
		})
		if err != nil {
			t.Fatal(err)
		}
		return ext
	}
	tests := []struct {
		name    string
		ext     *config.Extensions
		want    string
		wantErr string
	}{
		{name: "nil", ext: nil, want: `[]`},
		{name: "stdio with $VAR env", ext: parse(t, `{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GH_TOKEN": "$TOKEN"}}}}`),
			want: `[{"args":[],"command":"gh-mcp","env":[{"name":"GH_TOKEN","value":"s3cret"}],"name":"gh"}]`},
		{name: "http and sse", ext: parse(t, `{"mcpServers": {
				"a": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
				"b": {"transport": "streamable_http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "$TOKEN"}}}}`),
			want: `[{"headers":[],"name":"a","type":"sse","url":"http://127.0.0.1:9/sse"},` +
				`{"headers":[{"name":"X-Key","value":"s3cret"}],"name":"b","type":"http","url":"http://127.0.0.1:9/mcp"}]`},
		{name: "disabled filtered, even when broken", ext: parse(t, `{"mcpServers": {
				"on": {"command": "x"}, "off": {"enabled": false, "command": "y"}, "offbroken": {"enabled": false, "type": "http"}}}`),
			want: `[{"args":[],"command":"x","env":[],"name":"on"}]`},
		{name: "stdio without command", ext: parse(t, `{"mcpServers": {"ok": {"command": "x"}, "bad": {"args": ["a"]}}}`),
			wantErr: "MCP server 'bad' with stdio transport requires 'command' field"},
		{name: "http without url", ext: parse(t, `{"mcpServers": {"bad": {"type": "http"}}}`),
			wantErr: "MCP server 'bad' with http transport requires 'url' field"},
		{name: "unsupported transport", ext: parse(t, `{"mcpServers": {"bad": {"type": "websocket", "url": "ws://x"}}}`),
			wantErr: "MCP server 'bad' has unsupported transport type: websocket"},
		{name: "missing $VAR in env", ext: parse(t, `{"mcpServers": {"bad": {"command": "x", "env": {"K": "$NOPE"}}}}`),
			wantErr: "MCP server 'bad'"},
		{name: "built by hand, unknown type", ext: &config.Extensions{MCPServers: map[string]config.MCPServer{"w": {Name: "w", Enabled: true, Type: "ws"}}},
			wantErr: "unsupported transport type: ws"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mcpServers(tc.ext)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(canonJSON(t, tc.want), canonJSON(t, string(data))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Auto-approve prefers allow_once, then
// allow_always; denies when there is none or when disabled.
func TestPermissionPolicy(t *testing.T) {
	opt := func(kind acp.PermissionOptionKind, id string) acp.PermissionOption {
		return acp.PermissionOption{Kind: kind, OptionId: acp.PermissionOptionId(id), Name: id}
	}
	tests := []struct {
		name    string
		options []acp.PermissionOption
		auto    bool
		want    string // "" = cancelled
	}{
		{"allow_once first", []acp.PermissionOption{opt("allow_always", "aa"), opt("allow_once", "ao")}, true, "ao"},
		{"first of several allow_once", []acp.PermissionOption{opt("allow_once", "ao1"), opt("allow_once", "ao2")}, true, "ao1"},
		{"allow_always fallback", []acp.PermissionOption{opt("reject_once", "r"), opt("allow_always", "aa")}, true, "aa"},
		{"only rejections", []acp.PermissionOption{opt("reject_once", "r"), opt("reject_always", "ra")}, true, ""},
		{"none", nil, true, ""},
		{"empty option id skipped", []acp.PermissionOption{opt("allow_once", ""), opt("allow_always", "aa")}, true, "aa"},
		{"disabled", []acp.PermissionOption{opt("allow_once", "ao")}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &client{autoApprove: tc.auto, logger: discard()}
			resp, err := c.RequestPermission(t.Context(), acp.RequestPermissionRequest{Options: tc.options})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && resp.Outcome.Cancelled == nil:
				t.Errorf("outcome = %+v, want cancelled", resp.Outcome)
			case tc.want != "" && (resp.Outcome.Selected == nil || string(resp.Outcome.Selected.OptionId) != tc.want):
				t.Errorf("outcome = %+v, want selected %q", resp.Outcome, tc.want)
			}
		})
	}
}

func TestChildEnv(t *testing.T) {
	host := []string{"PATH=/bin", "HOME=/root", "SHELL=() { :; }", "AWS_SECRET_ACCESS_KEY=x", "LOGNAME=root", "noequals"}
	tests := []struct {
		name       string
		configured map[string]string
		want       []string
	}{
		{"defaults only", nil, []string{"HOME=/root", "LOGNAME=root", "PATH=/bin"}},
		{"configured overrides", map[string]string{"PATH": "/opt", "KEY": ""}, []string{"HOME=/root", "KEY=", "LOGNAME=root", "PATH=/opt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, childEnv(host, tc.configured)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSliceLines(t *testing.T) {
	text := "a\nb\nc\nd"
	p := func(n int) *int { return &n }
	tests := []struct {
		name        string
		line, limit *int
		want        string
	}{
		{"all", nil, nil, text},
		{"from line 2", p(2), nil, "b\nc\nd"},
		{"limit 2", nil, p(2), "a\nb\n"},
		{"line 3 limit 1", p(3), p(1), "c\n"},
		{"line 0 is the start", p(0), p(1), "a\n"},
		{"past the end", p(9), p(2), ""},
		{"limit 0", p(1), p(0), ""},
		{"limit past the end", p(4), p(5), "d"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sliceLines(text, tc.line, tc.limit); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWorkspaceRelRefusesOutside(t *testing.T) {
	dir := t.TempDir()
	ws, err := openWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	tests := []struct {
		path, want string // want "" = refused
	}{
		{filepath.Join(dir, "a", "b.txt"), filepath.Join("a", "b.txt")},
		{dir, "."},
		{dir + "/x/../y", "y"},
		{dir + "/../x", ""},
		{dir + "-sibling/x", ""},
		{"/etc/passwd", ""},
		{"relative.txt", ""},
		{"", ""},
	}
	for _, tc := range tests {
		got, err := ws.rel(tc.path)
		if tc.want == "" {
			if err == nil {
				t.Errorf("rel(%q) = %q, want refusal", tc.path, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("rel(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
}

func FuzzWorkspaceRel(f *testing.F) {
	for _, s := range []string{"a", "../a", "a/../../b", "/etc/passwd", "./x", "a/./b/../c", "..", "...", "a\\..\\b"} {
		f.Add(s)
	}
	dir := f.TempDir()
	ws, err := openWorkspace(dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		for _, candidate := range []string{p, filepath.Join(dir, p), dir + "/" + p} {
			rel, err := ws.rel(candidate)
			if err != nil {
				continue
			}
			if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				t.Fatalf("rel(%q) = %q escapes", candidate, rel)
			}
			joined := filepath.Join(dir, rel)
			if joined != dir && !strings.HasPrefix(joined, dir+string(filepath.Separator)) {
				t.Fatalf("rel(%q) = %q resolves to %q outside %q", candidate, rel, joined, dir)
			}
		}
	})
}

// fs/write_text_file replaces a file atomically: a concurrent reader sees
// the old or the new content, never a mix or an empty file; the mode of
// an existing file is kept and no temporary file is left.
func TestWorkspaceWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	ws, err := openWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	target := filepath.Join(dir, "f.txt")
	a := bytes.Repeat([]byte("a"), 256<<10)
	b := bytes.Repeat([]byte("b"), 256<<10)
	must(t, os.WriteFile(target, a, 0o600))

	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			got, err := os.ReadFile(target)
			if err != nil {
				bad.Store(err.Error())
				return
			}
			if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
				bad.Store(fmt.Sprintf("torn read of %d bytes", len(got)))
				return
			}
		}
	}()
	for i := range 40 {
		content := a
		if i%2 == 0 {
			content = b
		}
		if err := ws.write(target, string(content)); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if v := bad.Load(); v != nil {
		t.Fatal(v)
	}
	st, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 kept", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries left, want 1", len(entries))
	}
	// A new file in a new folder gets 0644 and its folders.
	must(t, ws.write(filepath.Join(dir, "n", "m", "new.txt"), "x"))
	if st, err := os.Stat(filepath.Join(dir, "n", "m", "new.txt")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("new file: %v %v", st, err)
	}
	// The workspace itself and a folder are not files.
	for _, p := range []string{dir, filepath.Join(dir, "n")} {
		if err := ws.write(p, "x"); err == nil {
			t.Errorf("write(%q) succeeded", p)
		}
	}
}

func TestErrText(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{errors.New("plain"), "plain"},
		{acp.NewInternalError(map[string]any{"error": "peer disconnected before response"}), "Internal error: peer disconnected before response"},
		{acp.NewMethodNotFound("x/y"), "Method not found: map[method:x/y]"},
		{&acp.RequestError{Code: 1, Message: "m"}, "m"},
	}
	for _, tc := range tests {
		if got := errText(tc.err); got != tc.want {
			t.Errorf("errText(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
