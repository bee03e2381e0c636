package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wire gives the MCP manager the app's layout: a stdio call for a thread
// prepares the thread's workspace and the servers' temporary folder in it.
func TestToolsCallMCPToolPlacesStdioInThreadWorkspace(t *testing.T) {
	cfg, dir := mcpFixture(t, false)
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "--user", "alice",
		"tools", "call", "fake_get_weather", "--thread", "t1", "--args", `{"city":"Oslo"}`)
	if code != 0 || strings.TrimSpace(out) != "sunny in Oslo" {
		t.Fatalf("exit %d out %q err %q", code, out, errOut)
	}
	tmp := filepath.Join(dir, "users", "alice", "threads", "t1", "user-data", "workspace", ".mcp", "tmp")
	fi, err := os.Stat(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: mode %v, want a folder with mode 0700", tmp, fi.Mode())
	}
}
