package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Absent sections have DeerFlow's defaults and are no longer reported as
// ignored; DeerFlow's example keys decode.
func TestLLMCall_defaultsAndKeys(t *testing.T) {
	c := mustParse(t, "", anyEnv)
	if diff := cmp.Diff(LLMCall{RetryMaxAttempts: 3, RetryBaseDelayMs: 1000, RetryCapDelayMs: 8000, BurstRetryBaseDelayMs: 5000}, c.LLMCall); diff != "" {
		t.Errorf("llm_call defaults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(CircuitBreaker{FailureThreshold: 5, RecoveryTimeoutSec: 60}, c.CircuitBreaker); diff != "" {
		t.Errorf("circuit_breaker defaults (-want +got):\n%s", diff)
	}
	c = mustParse(t, `circuit_breaker:
  failure_threshold: 2
  recovery_timeout_sec: 30
llm_call:
  max_concurrent_calls: 4
  retry_max_attempts: 2
  retry_base_delay_ms: 10
  retry_cap_delay_ms: 20
  burst_retry_base_delay_ms: 15
`, anyEnv)
	if diff := cmp.Diff(LLMCall{MaxConcurrentCalls: 4, RetryMaxAttempts: 2, RetryBaseDelayMs: 10, RetryCapDelayMs: 20, BurstRetryBaseDelayMs: 15}, c.LLMCall); diff != "" {
		t.Errorf("llm_call (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(CircuitBreaker{FailureThreshold: 2, RecoveryTimeoutSec: 30}, c.CircuitBreaker); diff != "" {
		t.Errorf("circuit_breaker (-want +got):\n%s", diff)
	}
	for _, s := range c.IgnoredSections {
		if s.Name == "llm_call" || s.Name == "circuit_breaker" {
			t.Errorf("%s is still reported as ignored", s.Name)
		}
	}
}

// Out-of-range values and unknown keys are load errors naming the key and
// its line.
func TestLLMCall_badValuesNameTheKey(t *testing.T) {
	for _, tc := range []struct{ name, src, key, msg string }{
		{"no attempts", "llm_call:\n  retry_max_attempts: 0\n", "llm_call.retry_max_attempts", "between 1 and 10"},
		{"too many attempts", "llm_call:\n  retry_max_attempts: 50\n", "llm_call.retry_max_attempts", "between 1 and 10"},
		{"negative cap", "llm_call:\n  max_concurrent_calls: -1\n", "llm_call.max_concurrent_calls", "between 0 and"},
		{"negative delay", "llm_call:\n  retry_base_delay_ms: -5\n", "llm_call.retry_base_delay_ms", "between 0 and"},
		{"unbounded wait", "llm_call:\n  retry_cap_delay_ms: 3600000\n", "llm_call.retry_cap_delay_ms", "between 0 and 600000"},
		{"burst delay", "llm_call:\n  burst_retry_base_delay_ms: -1\n", "llm_call.burst_retry_base_delay_ms", "between 0 and"},
		{"threshold", "circuit_breaker:\n  failure_threshold: 0\n", "circuit_breaker.failure_threshold", "at least 1"},
		{"recovery", "circuit_breaker:\n  recovery_timeout_sec: -1\n", "circuit_breaker.recovery_timeout_sec", "between 0 and 86400"},
		{"unknown key", "llm_call:\n  retries: 3\n", "llm_call.retries", "unknown key"},
		{"unknown breaker key", "circuit_breaker:\n  threshold: 3\n", "circuit_breaker.threshold", "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tc.src), anyEnv)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tc.key || ce.Line < 2 || !strings.Contains(ce.Msg, tc.msg) {
				t.Errorf("error %v, want one at %s mentioning %q", err, tc.key, tc.msg)
			}
		})
	}
}
