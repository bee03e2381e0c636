package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/toolset"
)

// An unchanged extensions file is never parsed again and its MCP servers
// are never re-discovered, however often a run assembles its tools; a
// changed file is parsed once more, and only a changed server restarts.
func TestAssembleDoesNotReparseOrRediscover(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	starts := filepath.Join(dir, "starts.log")
	extPath := filepath.Join(dir, "extensions_config.json")
	writeExt := func(extra string) {
		doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"fake": map[string]any{"command": exe, "env": map[string]string{
				"ANTLER_CLI_TEST_MCP_SERVER": "1", "ANTLER_CLI_TEST_MCP_STARTS": starts, "EXTRA": extra}},
		}, "skills": map[string]any{}})
		if err := os.WriteFile(extPath, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeExt("a")
	cfg := writeFile(t, dir, "config.yaml", "sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n")
	g := &globals{opts: (&Options{Getenv: func(string) string { return "" }}).withDefaults(), config: cfg, home: dir, user: "default", logLevel: "error"}
	a, err := newApp(t.Context(), g)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	startCount := func() int {
		data, _ := os.ReadFile(starts)
		return strings.Count(string(data), "start")
	}
	assemble := func() int {
		ts, err := a.assembler.Assemble(t.Context(), toolset.Options{IncludeMCP: true})
		if err != nil {
			t.Fatal(err)
		}
		return len(ts.Entries)
	}
	for range 10 {
		if n := assemble(); n != 6 {
			t.Fatalf("assembled %d tools, want 6", n)
		}
	}
	if p := a.extensions.Parses(); p != 1 {
		t.Errorf("extensions parsed %d times for 10 assemblies of an unchanged file, want 1", p)
	}
	if s := startCount(); s != 1 {
		t.Errorf("MCP server started %d times, want 1", s)
	}

	// Same content rewritten: hashed, not re-parsed into a restart.
	writeExt("a")
	assemble()
	if s := startCount(); s != 1 {
		t.Errorf("rewriting identical content restarted the server (%d starts)", s)
	}
	// A changed server entry: parsed again, that server restarted once.
	writeExt("b")
	for range 3 {
		assemble()
	}
	if s := startCount(); s != 2 {
		t.Errorf("after a config change the server started %d times in all, want 2", s)
	}
}
