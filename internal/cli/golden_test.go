package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under internal/cli/testdata")

// checkGolden compares got with the file at path, or writes it with
// -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test ./internal/cli -run %s -update)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got); if the change is meant, run: go test ./internal/cli -run %s -update\n%s", path, t.Name(), diff)
	}
}

// commandPaths walks the command tree: every command that is not hidden,
// as its words after "antler" (the root is the empty path).
func commandPaths(c *cobra.Command, prefix []string) [][]string {
	out := [][]string{prefix}
	for _, sub := range c.Commands() {
		if sub.Hidden || sub.Name() == "help" {
			continue
		}
		out = append(out, commandPaths(sub, append(append([]string{}, prefix...), sub.Name()))...)
	}
	return out
}

// The --help of every command is a golden file: a change of a command's
// text or flags shows in review, and a command added without its golden
// fails.
func TestHelp_golden(t *testing.T) {
	paths := commandPaths(newRoot((&Options{}).withDefaults()), nil)
	seen := map[string]bool{}
	for _, p := range paths {
		name := strings.Join(append([]string{"antler"}, p...), "_")
		seen[name+".golden"] = true
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, append(p, "--help")...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			checkGolden(t, filepath.Join("testdata", "help", name+".golden"), out)
		})
	}
	if *updateGolden {
		return
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "help"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !seen[e.Name()] {
			t.Errorf("testdata/help/%s is the help of no command: delete it", e.Name())
		}
	}
}

// toolsTableConfig has config tools with long descriptions, and the fake
// MCP server of mcpFixture.
const toolsTableConfig = `models:
  - {name: m, use: langchain_openai:ChatOpenAI, model: x, api_key: k}
tools:
  - name: word_count
    group: text
    use: antler:command
    command: [wc, -w]
    description: Count the words of a text given on stdin, as wc -w does, and return the count as a number without any other output.
  - name: fetch_release_notes_for_package
    group: web
    use: antler:command
    command: [cat]
    description: "Fetch the release notes of a package from its registry.\nSecond line, never shown in the table."
tool_search: {enabled: false}
sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
`

// The tools table at 80 and 200 columns: descriptions are cut with "…"
// to fit, names never.
func TestToolsListTable_golden(t *testing.T) {
	_, dir := mcpFixture(t, false)
	cfg := writeFile(t, dir, "config.yaml", toolsTableConfig)
	for _, width := range []string{"80", "200"} {
		t.Run(width, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list", "--width", width)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if n := len([]rune(line)); width == "80" && n > 80 {
					t.Errorf("line %d is %d columns wide, want at most 80: %q", i+1, n, line)
				}
			}
			checkGolden(t, filepath.Join("testdata", "tools_list_"+width+".golden"), out)
		})
	}
	// $COLUMNS is the width when stdout is not a terminal and no --width.
	code, out, _ := runCLI(t, map[string]string{"COLUMNS": "200"}, "--config", cfg, "--home", dir, "tools", "list")
	want, _ := os.ReadFile(filepath.Join("testdata", "tools_list_200.golden"))
	if code != 0 || out != string(want) {
		t.Errorf("COLUMNS=200: exit %d, output differs from the 200-column golden:\n%s", code, out)
	}
}
