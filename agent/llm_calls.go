package agent

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/antlerhq/antler/config"
)

// LLMCalls is what the llm_error_handling middleware shares across every
// agent of the process: the cap on model calls in flight (llm_call.
// max_concurrent_calls) and a circuit breaker per model (the
// circuit_breaker section). Build one per process and hand it to the
// lead-agent factory and the subagent executor, so that both count
// against the same cap, as DeerFlow's one process-wide limiter does.
// It is safe for concurrent use.
type LLMCalls struct {
	retry   config.LLMCall
	breaker config.CircuitBreaker
	logger  *slog.Logger
	// slots holds a token per call in flight; nil means no cap. The cap
	// is fixed when LLMCalls is built (DeerFlow freezes it at the first
	// middleware built).
	slots chan struct{}

	mu       sync.Mutex
	breakers map[string]*circuit // per model name, at most one per configured model
}

// LLMCallsOptions configures NewLLMCalls.
type LLMCallsOptions struct {
	// LLMCall and CircuitBreaker are the sections; zero values mean
	// config.Default()'s.
	LLMCall        config.LLMCall
	CircuitBreaker config.CircuitBreaker
	// Logger receives the breaker's state changes; nil discards.
	Logger *slog.Logger
}

// NewLLMCalls returns the shared state for the given sections.
func NewLLMCalls(opts LLMCallsOptions) *LLMCalls {
	def := config.Default()
	if opts.LLMCall == (config.LLMCall{}) {
		opts.LLMCall = def.LLMCall
	}
	if opts.CircuitBreaker == (config.CircuitBreaker{}) {
		opts.CircuitBreaker = def.CircuitBreaker
	}
	opts.LLMCall.RetryMaxAttempts = max(opts.LLMCall.RetryMaxAttempts, 1)
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &LLMCalls{retry: opts.LLMCall, breaker: opts.CircuitBreaker, logger: logger, breakers: map[string]*circuit{}}
	if n := opts.LLMCall.MaxConcurrentCalls; n > 0 {
		l.slots = make(chan struct{}, n)
	}
	return l
}

// InFlight returns the model calls holding a slot of the cap now (0
// without a cap).
func (l *LLMCalls) InFlight() int { return len(l.slots) }

// acquire waits for a slot of the cap, or for ctx to end; release gives
// it back. Without a cap both do nothing. Only one attempt holds a slot:
// waits between retries do not.
func (l *LLMCalls) acquire(ctx context.Context) error {
	if l.slots == nil {
		return nil
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *LLMCalls) release() {
	if l.slots != nil {
		<-l.slots
	}
}

// circuitFor returns the breaker of a model, made on first use.
func (l *LLMCalls) circuitFor(modelName string) *circuit {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.breakers[modelName]
	if c == nil {
		c = &circuit{threshold: max(l.breaker.FailureThreshold, 1),
			recovery: time.Duration(l.breaker.RecoveryTimeoutSec) * time.Second,
			logger:   l.logger.With("model", modelName)}
		l.breakers[modelName] = c
	}
	return c
}

// circuit is DeerFlow's circuit breaker: closed, it counts consecutive
// failures and opens at the threshold; open, it refuses calls until the
// recovery time has passed, then lets one probe through (half open); the
// probe's success closes it, its failure opens it again.
type circuit struct {
	threshold int
	recovery  time.Duration
	logger    *slog.Logger

	mu        sync.Mutex
	state     circuitState
	failures  int
	openUntil time.Time
	probing   bool // half open: the probe is in flight
}

type circuitState int

const (
	circuitClosed circuitState = iota
	circuitOpen
	circuitHalfOpen
)

// allow reports whether a call may go to the model now; a false answer
// is the breaker's fast failure.
func (c *circuit) allow(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == circuitOpen {
		if now.Before(c.openUntil) {
			return false
		}
		c.state, c.probing = circuitHalfOpen, false
	}
	if c.state == circuitHalfOpen {
		if c.probing {
			return false
		}
		c.probing = true
	}
	return true
}

// success closes the circuit.
func (c *circuit) success() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != circuitClosed || c.failures > 0 {
		c.logger.Info("Circuit breaker reset (Closed). LLM service recovered.")
	}
	c.state, c.failures, c.openUntil, c.probing = circuitClosed, 0, time.Time{}, false
}

// failure counts a call that failed transiently after its retries: a
// failed probe opens the circuit again, the threshold-th failure in a
// row opens it.
func (c *circuit) failure(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == circuitHalfOpen {
		c.state, c.openUntil, c.probing = circuitOpen, now.Add(c.recovery), false
		c.logger.Error("Circuit breaker probe failed (Open).", "probe_after", c.recovery)
		return
	}
	c.failures++
	if c.failures >= c.threshold {
		c.openUntil = now.Add(c.recovery)
		if c.state != circuitOpen {
			c.state, c.probing = circuitOpen, false
			c.logger.Error("Circuit breaker tripped (Open).", "threshold", c.threshold, "probe_after", c.recovery)
		}
	}
}

// releaseProbe lets the next probe through after one that ended without
// a verdict (cancelled, or failed in a way that says nothing of the
// provider's health).
func (c *circuit) releaseProbe() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == circuitHalfOpen {
		c.probing = false
	}
}
