package config

import (
	"errors"
	"strings"
	"testing"
)

// The top-level token_budget section is decoded with DeerFlow's defaults
// for what it leaves out, and the subagents keep their own.
func TestTokenBudget_sectionDecodesWithDeerFlowDefaults(t *testing.T) {
	c := mustParse(t, "token_budget:\n  enabled: true\n  max_input_tokens: null\n", anyEnv)
	want := TokenBudget{Enabled: true, MaxTokens: 200_000, WarnThreshold: 0.8, HardStopThreshold: 1.0}
	if c.TokenBudget != want {
		t.Errorf("token_budget = %+v, want %+v", c.TokenBudget, want)
	}
	if c.Subagents.TokenBudget != defaultTokenBudget() {
		t.Errorf("subagents.token_budget = %+v, want the subagent default", c.Subagents.TokenBudget)
	}
	for _, s := range c.IgnoredSections {
		if s.Name == "token_budget" {
			t.Errorf("token_budget is ignored: %+v", s)
		}
	}
}

// DeerFlow's TokenBudgetConfig validation, at load, with file and line.
func TestTokenBudget_invalidValuesNameFileLineKey(t *testing.T) {
	for _, tc := range []struct {
		name, src, key, msg string
		line                int
	}{
		{"hard stop below the warning", "token_budget:\n  warn_threshold: 0.9\n  hard_stop_threshold: 0.5\n",
			"token_budget.hard_stop_threshold", "must be >= warn_threshold", 3},
		{"max_tokens below 1000", "token_budget:\n  max_tokens: 999\n", "token_budget.max_tokens", "1000", 2},
		{"a threshold above 1", "token_budget:\n  warn_threshold: 1.5\n", "token_budget.warn_threshold", "between 0 and 1", 2},
		{"a negative input limit", "token_budget:\n  max_input_tokens: -1\n", "token_budget.max_input_tokens", "", 2},
		{"the subagents' budget too", "subagents:\n  token_budget:\n    warn_threshold: 0.9\n    hard_stop_threshold: 0.8\n",
			"subagents.token_budget.hard_stop_threshold", "must be >= warn_threshold", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tc.src), anyEnv)
			var ce *Error
			if !errors.As(err, &ce) || ce.File != "config.yaml" || ce.Line != tc.line || ce.Key != tc.key || !strings.Contains(ce.Msg, tc.msg) {
				t.Errorf("Parse = %v, want config.yaml:%d: %s: ...%s", err, tc.line, tc.key, tc.msg)
			}
		})
	}
}
