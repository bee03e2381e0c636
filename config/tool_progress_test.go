package config

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestToolProgress_defaultsAndValues(t *testing.T) {
	want := ToolProgress{StagnationThreshold: 3, WarnEscalationCount: 2, InjectAssessment: true, JaccardSimilarityThreshold: 0.8,
		MinWordCountForSimilarity: 10, ExemptTools: []string{"ask_clarification", "write_todos", "present_files", "task"}, MaxTrackedThreads: 100}
	if diff := cmp.Diff(want, mustParse(t, "", anyEnv).ToolProgress); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	c := mustParse(t, `tool_progress:
  enabled: true
  stagnation_threshold: 2
  warn_escalation_count: 1
  inject_assessment: false
  jaccard_similarity_threshold: 0.5
  min_word_count_for_similarity: 4
  max_tracked_threads: 7
  exempt_tools: []
`, anyEnv)
	want = ToolProgress{Enabled: true, StagnationThreshold: 2, WarnEscalationCount: 1, JaccardSimilarityThreshold: 0.5,
		MinWordCountForSimilarity: 4, ExemptTools: []string{}, MaxTrackedThreads: 7}
	if diff := cmp.Diff(want, c.ToolProgress); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	for _, s := range c.Ignored {
		if s == "tool_progress" {
			t.Error("tool_progress is reported as ignored")
		}
	}
}

func TestToolProgress_invalidValuesNameTheKey(t *testing.T) {
	for _, tc := range []struct{ src, key string }{
		{"tool_progress:\n  stagnation_threshold: 0\n", "tool_progress.stagnation_threshold"},
		{"tool_progress:\n  warn_escalation_count: 0\n", "tool_progress.warn_escalation_count"},
		{"tool_progress:\n  max_tracked_threads: 0\n", "tool_progress.max_tracked_threads"},
		{"tool_progress:\n  jaccard_similarity_threshold: 1.5\n", "tool_progress.jaccard_similarity_threshold"},
		{"tool_progress:\n  stagnation: 3\n", "tool_progress.stagnation"},
	} {
		_, err := Parse("config.yaml", []byte(tc.src), anyEnv)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%q: error %v, want one at %s", tc.src, err, tc.key)
		}
	}
}

// TestExampleConfigToolProgressSection: the example config.yaml at the
// repository root sets the section, with DeerFlow's defaults.
func TestExampleConfigToolProgressSection(t *testing.T) {
	data, err := os.ReadFile("../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\ntool_progress:\n") {
		t.Fatal("the example config.yaml has no tool_progress section")
	}
	c, err := Load("../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(defaultToolProgress(), c.ToolProgress); diff != "" {
		t.Errorf("example tool_progress (-DeerFlow's defaults +example):\n%s", diff)
	}
}
