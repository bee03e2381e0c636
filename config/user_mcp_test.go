package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sharedGitHub = `{"mcpServers": {
  "github": {"type": "http", "url": "https://gh.example/mcp", "headers": {"Authorization": "$GH_AUTH_UNSET_FOR_TEST"}},
  "fs": {"command": "npx", "env": {"ROOT": "/srv"}}
}}`

func TestParseUserMCPErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"unknown top key", "{\n \"mcpServer\": {}\n}", "u.json:2: mcpServer"},
		{"unknown server key", "{\"mcpServers\": {\n \"a\": {\"comand\": \"x\"}\n}}", "u.json:2: mcpServers.a.comand"},
		{"unknown credential key", "{\"credentials\": {\n \"a\": {\"header\": {}}\n}}", "u.json:2: credentials.a.header"},
		{"own and credential", "{\"mcpServers\": {\"a\": {\"command\": \"x\"}},\n\"credentials\": {\n \"a\": {}\n}}", "u.json:3: credentials.a"},
		{"bad json", "{\n\"mcpServers\": [}", "u.json:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseUserMCP("u.json", []byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseUserMCPNoEnvResolution(t *testing.T) {
	t.Setenv("ANTLER_TEST_OPERATOR_SECRET", "operator")
	u, err := ParseUserMCP("u.json", []byte(`{"mcpServers": {"leak": {"type": "http", "url": "https://x.example", "headers": {"X": "$ANTLER_TEST_OPERATOR_SECRET"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	s := u.MCPServers["leak"]
	if !errors.Is(s.Err, ErrEnvNotSet) || s.Headers["X"] != "" {
		t.Fatalf("a user's $VAR must not resolve from the operator's environment: Err = %v, header = %q", s.Err, s.Headers["X"])
	}
}

func TestUserCredentialsCompleteSharedServer(t *testing.T) {
	ext, err := ParseExtensions("extensions_config.json", []byte(sharedGitHub), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gh := ext.MCPServers["github"]
	if !errors.Is(gh.Err, ErrEnvNotSet) || !cmp.Equal(gh.Unset, []string{"headers.Authorization"}) {
		t.Fatalf("shared github: Err = %v, Unset = %v", gh.Err, gh.Unset)
	}
	tests := []struct {
		name     string
		cred     Credential
		wantErr  string
		wantAuth string
		usable   bool
	}{
		{name: "value supplied", cred: Credential{Headers: map[string]string{"Authorization": "Bearer alice"}}, wantAuth: "Bearer alice", usable: true},
		{name: "nothing supplied", cred: Credential{}, wantAuth: "", usable: false},
		{name: "undeclared header", cred: Credential{Headers: map[string]string{"X-Other": "v"}}, wantErr: "headers.X-Other: the shared server 'github' declares no such key (declared: Authorization)"},
		{name: "undeclared env", cred: Credential{Env: map[string]string{"LD_PRELOAD": "/x.so"}}, wantErr: "env.LD_PRELOAD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gh.WithCredentials(tt.cred)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Headers["Authorization"] != tt.wantAuth || (got.Err == nil) != tt.usable {
				t.Errorf("Authorization = %q, Err = %v; want %q, usable %v", got.Headers["Authorization"], got.Err, tt.wantAuth, tt.usable)
			}
		})
	}
	if ext.MCPServers["github"].Headers["Authorization"] != "" {
		t.Error("WithCredentials changed the shared server's headers")
	}
}

func TestUserMCPViewAndOverlay(t *testing.T) {
	ext, err := ParseExtensions("extensions_config.json", []byte(sharedGitHub), nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := ParseUserMCP("u.json", []byte(`{"mcpServers": {"mine": {"type": "sse", "url": "https://mine.example"}, "fs": {"command": "evil"}},
	  "credentials": {"github": {"headers": {"Authorization": "Bearer bob"}}, "gone": {}}}`))
	if err != nil {
		t.Fatal(err)
	}
	over, warnings := u.Overlay(ext)
	if diff := cmp.Diff([]string{"github", "mine"}, serverNames(over)); diff != "" {
		t.Errorf("overlay servers (-want +got):\n%s", diff)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "mcpServers.fs: a shared server has this name") || !strings.Contains(warnings[1], "credentials.gone") {
		t.Errorf("warnings = %q", warnings)
	}
	view := u.View(ext)
	if diff := cmp.Diff([]string{"fs", "github", "mine"}, view.ServerNames()); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	if view.MCPServers["fs"].Command != "npx" || view.MCPServers["github"].Err != nil {
		t.Errorf("view: fs = %+v, github Err = %v", view.MCPServers["fs"], view.MCPServers["github"].Err)
	}
	if _, ok := ext.MCPServers["mine"]; ok {
		t.Error("View changed the shared extensions")
	}
}

func serverNames(m map[string]MCPServer) []string {
	e := &Extensions{MCPServers: m}
	return e.ServerNames()
}

func TestUserMCPFilesEdit(t *testing.T) {
	home := t.TempDir()
	files := &UserMCPFiles{Dir: func(user string) (string, error) {
		if user == "" || strings.Contains(user, "/") {
			return "", errors.New("bad user")
		}
		return filepath.Join(home, "users", user), nil
	}}
	u, err := files.Load("alice")
	if err != nil || !u.Empty() {
		t.Fatalf("Load of no file = %v, %v", u, err)
	}
	_, err = files.Edit("alice", func(d *UserMCPDoc) error {
		d.MCPServers["notes"] = json.RawMessage(`{"type": "http", "url": "https://notes.example", "headers": {"Authorization": "Bearer a"}}`)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, "users", "alice", UserMCPFileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("folder mode = %v, want 0700", di.Mode().Perm())
	}
	a1, _ := files.Load("alice")
	a2, _ := files.Load("alice")
	if a1 != a2 || a1.MCPServers["notes"].URL != "https://notes.example" {
		t.Errorf("Load: %p %p %+v", a1, a2, a1.MCPServers["notes"])
	}
	if b, _ := files.Load("bob"); !b.Empty() {
		t.Errorf("bob sees alice's file: %+v", b)
	}
	// A change that does not parse is refused and nothing is written.
	before, _ := os.ReadFile(path)
	_, err = files.Edit("alice", func(d *UserMCPDoc) error {
		d.MCPServers["bad"] = json.RawMessage(`{"urll": "x"}`)
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "mcpServers.bad.urll") {
		t.Fatalf("Edit with an unknown key: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a refused edit changed the file")
	}
	if _, err := files.Load("../x"); err == nil {
		t.Error("a bad user id was accepted")
	}
}
