package agent

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// LLMRetryEvent is the custom event emitted before each retry of a
// failed model call (DeerFlow's llm_retry), with attempt, max_attempts,
// wait_ms, reason and message.
const LLMRetryEvent = "llm_retry"

// The Meta keys of an error fallback message (DeerFlow's
// additional_kwargs): the marker that the run failed, and what failed.
const (
	MetaErrorFallback = "deerflow_error_fallback"
	MetaErrorType     = "error_type"
	MetaErrorReason   = "error_reason"
	MetaErrorDetail   = "error_detail"
)

// maxRetryAfter bounds a wait the provider asks for (Retry-After):
// DeerFlow honours any; a server must not hold a run without bound.
const maxRetryAfter = 2 * time.Minute

// LLMErrorHandlingOptions configures LLMErrorHandling.
type LLMErrorHandlingOptions struct {
	// Calls is the process's shared cap and breakers; nil builds one of
	// DeerFlow's defaults for this middleware alone.
	Calls *LLMCalls
	// ModelName names the model whose circuit breaker applies.
	ModelName string
	// Logger receives the warnings; nil uses the model call's logger.
	Logger *slog.Logger
	// Sleep waits between attempts; nil waits on a timer. It returns
	// ctx's error when ctx ends first. For tests.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter draws a wait in lo..hi milliseconds; nil draws uniformly.
	// For tests.
	Jitter func(lo, hi int) int
	// Now is the breaker's clock; nil means time.Now.
	Now func() time.Time
}

// LLMErrorHandling is DeerFlow's LLMErrorHandlingMiddleware. Around every
// model call (all the model middlewares inside it) it:
//
//   - answers at once with DeerFlow's circuit-breaker text while the
//     model's circuit is open (circuit_breaker);
//   - holds a slot of the process's cap on calls in flight for each
//     attempt (llm_call.max_concurrent_calls);
//   - retries a transient failure (a dropped connection, HTTP 408, 409,
//     425, 429, 5xx, a busy or burst-rate answer) up to
//     llm_call.retry_max_attempts attempts (two for a burst-rate limit),
//     waiting the provider's Retry-After or a decorrelated-jitter delay,
//     and emits an llm_retry event and a warning before each retry;
//   - turns a call that still fails into an assistant message with
//     DeerFlow's text for the user and the error_* marker in its Meta,
//     instead of failing the run: the loop then ends the run with stop
//     reason error and the detail in the run's record (agent/run.go).
//
// Cancellation of the run is never retried nor turned into a message.
func LLMErrorHandling(opts LLMErrorHandlingOptions) tool.ModelMiddleware {
	if opts.Calls == nil {
		opts.Calls = NewLLMCalls(LLMCallsOptions{})
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	if opts.Jitter == nil {
		opts.Jitter = func(lo, hi int) int { return lo + rand.IntN(hi-lo+1) }
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h := &llmErrorHandler{opts: opts, circuit: opts.Calls.circuitFor(opts.ModelName)}
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			return h.handle(ctx, call, next)
		}
	}
}

type llmErrorHandler struct {
	opts    LLMErrorHandlingOptions
	circuit *circuit
}

func (h *llmErrorHandler) log(call *tool.ModelCall) *slog.Logger {
	if h.opts.Logger != nil {
		return h.opts.Logger
	}
	return call.Log()
}

func (h *llmErrorHandler) handle(ctx context.Context, call *tool.ModelCall, next tool.ModelHandler) (*model.Response, error) {
	if !h.circuit.allow(h.opts.Now()) {
		return llmFallback(llmCircuitOpenText, "CircuitBreakerOpen", llmReasonCircuitOpen, "LLM circuit breaker is open"), nil
	}
	retry := h.opts.Calls.retry
	prevMs := -1
	for attempt := 1; ; attempt++ {
		resp, err := h.attempt(ctx, call, next)
		if err == nil {
			h.circuit.success()
			return resp, nil
		}
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			h.circuit.releaseProbe()
			return nil, err
		}
		f := classifyLLMError(err)
		maxAttempts := retry.RetryMaxAttempts
		if f.reason == llmReasonBurstRate {
			maxAttempts = min(maxAttempts, llmBurstMaxAttempts)
		}
		if f.retriable && attempt < maxAttempts {
			waitMs := h.delayMs(prevMs, err, f.reason)
			prevMs = waitMs
			h.log(call).Warn("Transient LLM error; retrying", "attempt", attempt, "max_attempts", maxAttempts,
				"wait_ms", waitMs, "reason", f.reason, "err", llmErrorDetail(err))
			call.EmitEvent(LLMRetryEvent, map[string]any{"attempt": attempt, "max_attempts": maxAttempts,
				"wait_ms": waitMs, "reason": f.reason, "message": llmRetryText(attempt, maxAttempts, waitMs, f.reason)})
			if err := h.opts.Sleep(ctx, time.Duration(waitMs)*time.Millisecond); err != nil {
				h.circuit.releaseProbe()
				return nil, err
			}
			continue
		}
		h.log(call).Warn("LLM call failed", "attempts", attempt, "reason", f.reason, "err", llmErrorDetail(err))
		if f.retriable && f.reason != llmReasonBurstRate {
			h.circuit.failure(h.opts.Now())
		} else {
			// Not the provider being down (a bad key, a burst-rate
			// throttle): no failure counted, so the breaker does not
			// shut every call out for the recovery time.
			h.circuit.releaseProbe()
		}
		return llmFallback(llmUserText(err, f.reason), llmErrorType(err), f.reason, llmErrorDetail(err)), nil
	}
}

// attempt runs one call holding a slot of the cap.
func (h *llmErrorHandler) attempt(ctx context.Context, call *tool.ModelCall, next tool.ModelHandler) (*model.Response, error) {
	if err := h.opts.Calls.acquire(ctx); err != nil {
		return nil, err
	}
	defer h.opts.Calls.release()
	return next(ctx, call)
}

// delayMs is the wait before the next attempt: the provider's
// Retry-After as it asked (bounded by maxRetryAfter), else DeerFlow's
// decorrelated jitter, uniform in base..min(cap, max(base, 3·seed)) with
// the previous wait as the seed (the reason's base on the first retry).
func (h *llmErrorHandler) delayMs(prevMs int, err error, reason string) int {
	var pe *model.ProviderError
	if errors.As(err, &pe) && pe.RetryAfter > 0 {
		return int(min(pe.RetryAfter, maxRetryAfter) / time.Millisecond)
	}
	r := h.opts.Calls.retry
	base := r.RetryBaseDelayMs
	if reason == llmReasonBurstRate {
		base = r.BurstRetryBaseDelayMs
	}
	seed := base
	if prevMs >= 0 {
		seed = prevMs
	}
	high := min(r.RetryCapDelayMs, max(base, seed*3))
	if high < base {
		return r.RetryCapDelayMs // a base above the cap: the cap wins
	}
	return h.opts.Jitter(base, high)
}

// llmFallback is the assistant message that replaces a failed call.
func llmFallback(text, errType, reason, detail string) *model.Response {
	return &model.Response{
		Message: model.Message{Role: model.RoleAssistant, Content: text, Meta: map[string]any{
			MetaErrorFallback: true, MetaErrorType: errType, MetaErrorReason: reason, MetaErrorDetail: detail}},
		FinishReason: model.FinishStop,
	}
}

// IsErrorFallback reports whether m is an error fallback message (a model
// call that failed after its retries), and its detail.
func IsErrorFallback(m model.Message) (detail string, ok bool) {
	if b, _ := m.Meta[MetaErrorFallback].(bool); !b {
		return "", false
	}
	detail, _ = m.Meta[MetaErrorDetail].(string)
	if detail == "" {
		detail, _ = m.Meta[MetaErrorReason].(string)
	}
	if detail == "" {
		detail = m.Content
	}
	return detail, true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
