package config

// LLMCall is DeerFlow's llm_call section: how model calls are retried
// after a transient failure and how many run at once in the process
// (agent.LLMCalls, the llm_error_handling middleware). DeerFlow's
// defaults.
type LLMCall struct {
	// MaxConcurrentCalls caps the model calls in flight at once in the
	// process, lead agents and subagents together (default 0: no cap,
	// 0..10000). It is read once, when the process starts.
	MaxConcurrentCalls int `yaml:"max_concurrent_calls"`
	// RetryMaxAttempts is the most attempts of a call that failed
	// transiently, 1 meaning no retry (default 3, 1..10).
	RetryMaxAttempts int `yaml:"retry_max_attempts"`
	// RetryBaseDelayMs is the least wait before a retry and the seed of
	// the decorrelated jitter (default 1000, 0..600000).
	RetryBaseDelayMs int `yaml:"retry_base_delay_ms"`
	// RetryCapDelayMs is the most any computed wait may be (default 8000,
	// 0..600000).
	RetryCapDelayMs int `yaml:"retry_cap_delay_ms"`
	// BurstRetryBaseDelayMs replaces RetryBaseDelayMs after a provider's
	// burst-rate limit (limit_burst_rate) (default 5000, 0..600000).
	BurstRetryBaseDelayMs int `yaml:"burst_retry_base_delay_ms"`
}

// CircuitBreaker is DeerFlow's circuit_breaker section: after this many
// consecutive model calls that failed transiently even after their
// retries, calls to the model are answered at once with an explanation
// instead of reaching the provider, until the recovery time has passed
// and one probe call succeeds (agent.LLMCalls).
type CircuitBreaker struct {
	// FailureThreshold is the consecutive failures that open the circuit
	// (default 5, >= 1).
	FailureThreshold int `yaml:"failure_threshold"`
	// RecoveryTimeoutSec is how long the circuit stays open before a
	// probe call is let through (default 60, 0..86400).
	RecoveryTimeoutSec int `yaml:"recovery_timeout_sec"`
}

// maxRetryDelayMs bounds every configured retry wait (ten minutes).
const maxRetryDelayMs = 600_000

func defaultLLMCall() LLMCall {
	return LLMCall{RetryMaxAttempts: 3, RetryBaseDelayMs: 1000, RetryCapDelayMs: 8000, BurstRetryBaseDelayMs: 5000}
}

func defaultCircuitBreaker() CircuitBreaker {
	return CircuitBreaker{FailureThreshold: 5, RecoveryTimeoutSec: 60}
}

// validateLLMCall checks DeerFlow's bounds (ge=0, ge=1) and Antler's
// upper ones, so that no setting makes a wait or a retry loop unbounded.
func (p *parser) validateLLMCall() {
	l := p.cfg.LLMCall
	between(p, "llm_call.max_concurrent_calls", l.MaxConcurrentCalls, 0, 10_000)
	between(p, "llm_call.retry_max_attempts", l.RetryMaxAttempts, 1, 10)
	between(p, "llm_call.retry_base_delay_ms", l.RetryBaseDelayMs, 0, maxRetryDelayMs)
	between(p, "llm_call.retry_cap_delay_ms", l.RetryCapDelayMs, 0, maxRetryDelayMs)
	between(p, "llm_call.burst_retry_base_delay_ms", l.BurstRetryBaseDelayMs, 0, maxRetryDelayMs)
	c := p.cfg.CircuitBreaker
	atLeast(p, "circuit_breaker.failure_threshold", c.FailureThreshold, 1)
	between(p, "circuit_breaker.recovery_timeout_sec", c.RecoveryTimeoutSec, 0, 86_400)
}

// between reports a number outside lo..hi.
func between(p *parser, path string, v, lo, hi int) {
	if v < lo || v > hi {
		p.invalid(path, "must be between %d and %d, got %d", lo, hi, v)
	}
}
