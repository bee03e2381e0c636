package toolset_test

import (
	"slices"
	"testing"

	"github.com/antlerhq/antler/toolset"
)

// The host-bash gate drops bash whatever its name
// and group, also under Antler's short use string antler:bash.
func TestHostBashGateCoversShortUse(t *testing.T) {
	cfg := mustConfig(t, baseConfig+"tools:\n  - {name: shell, group: exec, use: antler:bash}\n  - {name: ls, group: files, use: antler:ls}\n")
	a := &toolset.Assembler{
		Registry: toolset.DefaultRegistry(),
		Env:      &toolset.Env{Config: cfg, Home: t.TempDir()},
	}
	ts, err := a.Assemble(t.Context(), toolset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if names := ts.Names(); slices.Contains(names, "bash") || !slices.Contains(names, "ls") {
		t.Fatalf("host bash is off, yet the tools are %v", names)
	}
}
