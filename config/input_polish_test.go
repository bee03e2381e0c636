package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInputPolishAndSuggestions: DeerFlow's defaults without the
// sections, the values as set, and each bad value named by its key.
func TestInputPolishAndSuggestions(t *testing.T) {
	const models = "models:\n  - {name: fast, use: x, model: m}\n"
	t.Run("defaults", func(t *testing.T) {
		c := mustParse(t, models, anyEnv)
		if diff := cmp.Diff(InputPolish{Enabled: true, MaxChars: 4000}, c.InputPolish); diff != "" {
			t.Errorf("input_polish (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(Suggestions{Enabled: true, MaxSuggestions: 3}, c.Suggestions); diff != "" {
			t.Errorf("suggestions (-want +got):\n%s", diff)
		}
	})
	t.Run("as set", func(t *testing.T) {
		c := mustParse(t, models+"input_polish: {enabled: false, max_chars: 10, model_name: fast}\nsuggestions: {enabled: false, max_suggestions: 5}\n", anyEnv)
		if diff := cmp.Diff(InputPolish{MaxChars: 10, ModelName: "fast"}, c.InputPolish); diff != "" {
			t.Errorf("input_polish (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(Suggestions{MaxSuggestions: 5}, c.Suggestions); diff != "" {
			t.Errorf("suggestions (-want +got):\n%s", diff)
		}
		if len(c.Ignored) != 0 {
			t.Errorf("Ignored = %v, want none", c.Ignored)
		}
	})
	for _, tc := range []struct{ name, src, want string }{
		{"max_chars below one", "input_polish: {max_chars: 0}\n", "input_polish.max_chars: must be at least 1, got 0"},
		{"unknown model", "input_polish: {model_name: slow}\n", `input_polish.model_name: no model named "slow"`},
		{"too many suggestions", "suggestions: {max_suggestions: 6}\n", "suggestions.max_suggestions: must be between 1 and 5, got 6"},
		{"no suggestions", "suggestions: {max_suggestions: 0}\n", "suggestions.max_suggestions: must be between 1 and 5, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(models+tc.src), anyEnv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
