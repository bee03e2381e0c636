package toolset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

func TestSandboxToolsRegistered(t *testing.T) {
	r := DefaultRegistry()
	home := t.TempDir()
	env := &Env{Config: config.Default(), Home: home}
	for _, tc := range []struct{ use, name string }{
		{"deerflow.sandbox.tools:ls_tool", "ls"}, {"antler:ls", "ls"},
		{"deerflow.sandbox.tools:read_file_tool", "read_file"}, {"antler:read_file", "read_file"},
		{"deerflow.sandbox.tools:write_file_tool", "write_file"}, {"antler:write_file", "write_file"},
		{"deerflow.sandbox.tools:str_replace_tool", "str_replace"}, {"antler:str_replace", "str_replace"},
		{"deerflow.sandbox.tools:glob_tool", "glob"}, {"antler:glob", "glob"},
		{"deerflow.sandbox.tools:grep_tool", "grep"}, {"antler:grep", "grep"},
		{"deerflow.sandbox.tools:bash_tool", "bash"}, {"antler:bash", "bash"},
	} {
		tl, err := r.BuildTool(t.Context(), env, config.ToolEntry{Name: "renamed", Use: tc.use, Options: map[string]any{"max_results": 7}})
		if err != nil {
			t.Fatalf("%s: %v", tc.use, err)
		}
		if tl.Name != tc.name {
			t.Errorf("%s built %q, want %q", tc.use, tl.Name, tc.name)
		}
	}
	if _, err := r.BuildTool(t.Context(), env, config.ToolEntry{Use: "antler:grep", Options: map[string]any{"max_results": "many"}}); err == nil {
		t.Error("a non-integer max_results was accepted")
	}
}

// The read_file factory works from an Env with only Config and Home (the
// CLI's `antler tools call read_file --thread t1` path), and the tools of
// one Env share one provider: a read through one tool value opens the
// read-before-write gate of another.
func TestSandboxFactoriesShareProvider(t *testing.T) {
	r := DefaultRegistry()
	home := t.TempDir()
	env := &Env{Config: config.Default(), Home: home}
	ws := filepath.Join(home, "users", "default", "threads", "t1", "user-data", "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello from disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(use string) *tool.Tool {
		tl, err := r.BuildTool(t.Context(), env, config.ToolEntry{Use: use})
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	call := &tool.Call{ThreadID: "t1"}
	res, err := build("antler:read_file").Handler(t.Context(), call, []byte(`{"description":"x","path":"/mnt/user-data/workspace/a.txt"}`))
	if err != nil || res.TextContent() != "hello from disk\n" {
		t.Fatalf("read_file = %q, %v", res.TextContent(), err)
	}
	res, err = build("antler:write_file").Handler(t.Context(), call, []byte(`{"description":"x","path":"/mnt/user-data/workspace/a.txt","content":"new"}`))
	if err != nil || res.TextContent() != "OK" {
		t.Fatalf("write after read through another tool value = %q, %v", res.TextContent(), err)
	}
	res, _ = build("antler:bash").Handler(t.Context(), call, []byte(`{"description":"x","command":"ls"}`))
	if !strings.Contains(res.TextContent(), "Host bash execution is disabled") {
		t.Errorf("bash gate: %q", res.TextContent())
	}
	other := &Env{Config: config.Default()}
	if _, err := r.BuildTool(t.Context(), other, config.ToolEntry{Use: "antler:ls"}); err == nil {
		t.Error("an Env without Home or Sandbox was accepted")
	}
}
