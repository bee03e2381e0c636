package config

import (
	"slices"
	"strings"
	"testing"
)

// TestToolOutputStorageSubdir is DeerFlow's TestStorageSubdirConfig:
// storage_subdir must be one path segment, so that a folder-name
// exclusion of saved tool outputs stays sound.
func TestToolOutputStorageSubdir(t *testing.T) {
	for _, c := range []struct {
		name, value string
		ok          bool
	}{
		{"custom single segment", "tool-output-cache", true},
		{"hidden single segment", ".cache", true},
		{"nested", "cache/tool-results", false},
		{"Windows separator", `cache\tool-results`, false},
		{"absolute", "/abs/path", false},
		{"dot", ".", false},
		{"dot dot", "..", false},
		{"empty", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse("config.yaml", []byte("tool_output:\n  storage_subdir: '"+c.value+"'\n"), nil)
			switch {
			case c.ok && err != nil:
				t.Fatalf("refused: %v", err)
			case c.ok && cfg.ToolOutput.StorageSubdir != c.value:
				t.Errorf("storage_subdir %q, want %q", cfg.ToolOutput.StorageSubdir, c.value)
			case !c.ok && (err == nil || !strings.Contains(err.Error(), "tool_output.storage_subdir: must be a single path segment")):
				t.Errorf("error %v, want the storage_subdir one", err)
			}
		})
	}
}

// TestToolOutputDefaults: the budget is on with DeerFlow's defaults when
// the section is absent, and a partial section keeps the other defaults.
func TestToolOutputDefaults(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      ToolOutput
	}{
		{"absent", "config_version: 34\n", defaultToolOutput()},
		{"partial", "tool_output:\n  externalize_min_chars: 5000\n  tool_overrides: {bash: 0}\n", func() ToolOutput {
			d := defaultToolOutput()
			d.ExternalizeMinChars, d.ToolOverrides = 5000, map[string]int{"bash": 0}
			return d
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mustParse(t, c.src, nil).ToolOutput
			if !got.Enabled || got.ExternalizeMinChars != c.want.ExternalizeMinChars || got.StorageSubdir != ".tool-results" ||
				got.FallbackMaxChars != 30000 || len(got.ExemptTools) != 2 || len(got.ToolOverrides) != len(c.want.ToolOverrides) {
				t.Errorf("tool_output %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestExampleConfigToolOutputSection: the example config.yaml at the
// repository root documents the section with DeerFlow's defaults.
func TestExampleConfigToolOutputSection(t *testing.T) {
	c, err := Load("../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	to := c.ToolOutput
	if !to.Enabled || to.ExternalizeMinChars != 12000 || !slices.Contains(to.ExemptTools, "read_file") || to.StorageSubdir != ".tool-results" {
		t.Errorf("example tool_output %+v", to)
	}
}
