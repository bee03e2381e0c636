package agent_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/tool"
)

// failWith fails a model call with err before anything is streamed.
func failWith(err error) step {
	return func(*model.Request) ([]model.Event, error) { return nil, err }
}

// emptyStream ends without a response (DeerFlow's empty generations
// IndexError).
func emptyStream() step {
	return func(*model.Request) ([]model.Event, error) { return nil, nil }
}

func providerErr(status int, msg string) *model.ProviderError {
	return &model.ProviderError{Model: "m", Provider: "openai", StatusCode: status, Message: msg}
}

// sleeps records the waits of the middleware instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// lowJitter draws the lowest wait of the window, so that the waits are
// known.
func lowJitter(lo, _ int) int { return lo }

// llmRun runs one turn of an agent whose model plays steps behind the
// error handling of calls.
func llmRun(t *testing.T, calls *agent.LLMCalls, s *sleeps, steps ...step) (*fakeModel, *agent.Outcome, []agent.Event) {
	t.Helper()
	fm := &fakeModel{steps: steps}
	mw := agent.LLMErrorHandling(agent.LLMErrorHandlingOptions{Calls: calls, ModelName: "m", Sleep: s.sleep, Jitter: lowJitter})
	var evs []agent.Event
	out, err := newAgent(t, agent.Options{Model: fm, ModelMiddlewares: []tool.ModelMiddleware{mw}}).Invoke(t.Context(),
		agent.Input{Messages: []model.Message{model.UserText("hi")}}, func(ev agent.Event) { evs = append(evs, ev) })
	if err != nil {
		t.Fatalf("the run failed with a Go error: %v", err)
	}
	return fm, out, evs
}

func retryEvents(evs []agent.Event) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		if ev.Type == agent.LLMRetryEvent {
			out = append(out, ev.Data.(map[string]any))
		}
	}
	return out
}

func retryEvent(attempt, maxAttempts, waitMs int, reason, msg string) map[string]any {
	return map[string]any{"attempt": attempt, "max_attempts": maxAttempts, "wait_ms": waitMs, "reason": reason, "message": msg}
}

const (
	unavailableText = "The configured LLM provider is temporarily unavailable after multiple retries. Please wait a moment and continue the conversation."
	quotaText       = "The configured LLM provider rejected the request because the account is out of quota, billing is unavailable, or usage is restricted. Please fix the provider account and try again."
	authText        = "The configured LLM provider rejected the request because authentication or access is invalid. Please check the provider credentials and try again."
	burstText       = "The configured LLM provider is temporarily throttling requests because the request rate increased too quickly (burst-rate limit). Please wait a moment and try again."
	circuitText     = "The configured LLM provider is currently unavailable due to continuous failures. Circuit breaker is engaged to protect the system. Please wait a moment before trying again."
)

// DeerFlow's cases with its default llm_call settings (3 attempts, base
// 1 s, cap 8 s, burst base 5 s): transient failures are retried with an
// llm_retry event each and the run completes; failures that remain, or
// that no retry can fix, become an assistant message with DeerFlow's text
// and error marker, and the run ends as error with the detail.
func TestLLMErrorHandling_DeerFlowCases(t *testing.T) {
	burst := providerErr(429, "Request rate increased too quickly")
	burst.Code = "limit_burst_rate"
	hinted := providerErr(503, "upstream busy")
	hinted.RetryAfter = 3 * time.Second
	dropped := &model.ProviderError{Model: "m", Provider: "openai", Message: "the stream ended unexpectedly", Err: io.ErrUnexpectedEOF}
	bad := providerErr(400, "messages: invalid role")
	tests := []struct {
		name      string
		steps     []step
		wantCalls int
		wantWaits []time.Duration
		wantRetry []map[string]any
		// wantText is the final assistant message; wantReason its
		// error_reason ("" for a real answer).
		wantText, wantReason string
		wantStop             agent.StopReason
		wantError            string
	}{
		{name: "busy provider retried then succeeds",
			steps:     []step{failWith(providerErr(0, "Server busy, please try again later")), answer("done")},
			wantCalls: 2, wantWaits: []time.Duration{time.Second},
			wantRetry: []map[string]any{retryEvent(1, 3, 1000, "busy", "LLM request retry 1/3: provider is busy. Retrying in 1s.")},
			wantText:  "done", wantStop: agent.StopCompleted},
		{name: "503 twice then succeeds, the wait seeded by the last",
			steps:     []step{failWith(providerErr(503, "unavailable")), failWith(providerErr(502, "bad gateway")), answer("done")},
			wantCalls: 3, wantWaits: []time.Duration{time.Second, time.Second},
			wantRetry: []map[string]any{
				retryEvent(1, 3, 1000, "transient", "LLM request retry 1/3: provider request failed temporarily. Retrying in 1s."),
				retryEvent(2, 3, 1000, "transient", "LLM request retry 2/3: provider request failed temporarily. Retrying in 1s.")},
			wantText: "done", wantStop: agent.StopCompleted},
		{name: "a dropped stream is transient",
			steps:     []step{failMidStream("Hel", dropped), answer("Hello")},
			wantCalls: 2, wantWaits: []time.Duration{time.Second},
			wantRetry: []map[string]any{retryEvent(1, 3, 1000, "transient", "LLM request retry 1/3: provider request failed temporarily. Retrying in 1s.")},
			wantText:  "Hello", wantStop: agent.StopCompleted},
		{name: "a stream without a response is transient",
			steps:     []step{emptyStream(), answer("ok")},
			wantCalls: 2, wantWaits: []time.Duration{time.Second},
			wantRetry: []map[string]any{retryEvent(1, 3, 1000, "transient", "LLM request retry 1/3: provider request failed temporarily. Retrying in 1s.")},
			wantText:  "ok", wantStop: agent.StopCompleted},
		{name: "Retry-After is honoured without jitter",
			steps:     []step{failWith(hinted), answer("ok")},
			wantCalls: 2, wantWaits: []time.Duration{3 * time.Second},
			wantRetry: []map[string]any{retryEvent(1, 3, 3000, "transient", "LLM request retry 1/3: provider request failed temporarily. Retrying in 3s.")},
			wantText:  "ok", wantStop: agent.StopCompleted},
		{name: "transient failures exhaust the attempts",
			steps:     []step{failWith(providerErr(503, "unavailable")), failWith(providerErr(503, "unavailable")), failWith(providerErr(503, "unavailable"))},
			wantCalls: 3, wantWaits: []time.Duration{time.Second, time.Second},
			wantRetry: []map[string]any{
				retryEvent(1, 3, 1000, "transient", "LLM request retry 1/3: provider request failed temporarily. Retrying in 1s."),
				retryEvent(2, 3, 1000, "transient", "LLM request retry 2/3: provider request failed temporarily. Retrying in 1s.")},
			wantText: unavailableText, wantReason: "transient", wantStop: agent.StopError,
			wantError: `model "m" (openai): HTTP 503 Service Unavailable: unavailable`},
		{name: "quota is never retried",
			steps:     []step{failWith(providerErr(429, "You exceeded your current quota"))},
			wantCalls: 1, wantText: quotaText, wantReason: "quota", wantStop: agent.StopError,
			wantError: `model "m" (openai): HTTP 429 Too Many Requests: You exceeded your current quota`},
		{name: "bad credentials are never retried",
			steps:     []step{failWith(providerErr(401, "Invalid API key provided"))},
			wantCalls: 1, wantText: authText, wantReason: "auth", wantStop: agent.StopError,
			wantError: `model "m" (openai): HTTP 401 Unauthorized: Invalid API key provided`},
		{name: "a burst-rate limit gets one retry from the burst base",
			steps:     []step{failWith(burst), failWith(burst)},
			wantCalls: 2, wantWaits: []time.Duration{5 * time.Second},
			wantRetry: []map[string]any{retryEvent(1, 2, 5000, "burst_rate", "LLM request retry 1/2: provider is throttling request burst rate. Retrying in 5s.")},
			wantText:  burstText, wantReason: "burst_rate", wantStop: agent.StopError,
			wantError: `model "m" (openai): HTTP 429 Too Many Requests: Request rate increased too quickly`},
		{name: "any other failure names its detail",
			steps:     []step{failWith(bad)},
			wantCalls: 1, wantText: "LLM request failed: " + bad.Error(), wantReason: "generic", wantStop: agent.StopError,
			wantError: bad.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &sleeps{}
			fm, out, evs := llmRun(t, agent.NewLLMCalls(agent.LLMCallsOptions{}), s, tc.steps...)
			if fm.count() != tc.wantCalls {
				t.Errorf("model calls = %d, want %d", fm.count(), tc.wantCalls)
			}
			if diff := cmp.Diff(tc.wantWaits, s.d); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRetry, retryEvents(evs)); diff != "" {
				t.Errorf("llm_retry events (-want +got):\n%s", diff)
			}
			last := lastAssistant(t, out)
			if last.Content != tc.wantText {
				t.Errorf("answer = %q, want %q", last.Content, tc.wantText)
			}
			if out.Reason != tc.wantStop || out.Error != tc.wantError {
				t.Errorf("outcome = %s %q, want %s %q", out.Reason, out.Error, tc.wantStop, tc.wantError)
			}
			if tc.wantReason == "" {
				if _, ok := agent.IsErrorFallback(last); ok {
					t.Errorf("a real answer is marked as a fallback: %v", last.Meta)
				}
				return
			}
			want := map[string]any{agent.MetaErrorFallback: true, agent.MetaErrorType: "ProviderError",
				agent.MetaErrorReason: tc.wantReason, agent.MetaErrorDetail: tc.wantError}
			if diff := cmp.Diff(want, last.Meta); diff != "" {
				t.Errorf("fallback Meta (-want +got):\n%s", diff)
			}
		})
	}
}

// llm_call's settings are read: one attempt means no retry, and the
// configured base and cap shape the decorrelated jitter's window.
func TestLLMErrorHandling_settings(t *testing.T) {
	t.Run("one attempt", func(t *testing.T) {
		calls := agent.NewLLMCalls(agent.LLMCallsOptions{LLMCall: config.LLMCall{RetryMaxAttempts: 1, RetryCapDelayMs: 8000}})
		fm, out, evs := llmRun(t, calls, &sleeps{}, failWith(providerErr(503, "x")), answer("never"))
		if fm.count() != 1 || out.Reason != agent.StopError || len(retryEvents(evs)) != 0 {
			t.Errorf("calls %d, reason %s, retries %d", fm.count(), out.Reason, len(retryEvents(evs)))
		}
	})
	t.Run("jitter window", func(t *testing.T) {
		calls := agent.NewLLMCalls(agent.LLMCallsOptions{LLMCall: config.LLMCall{RetryMaxAttempts: 4, RetryBaseDelayMs: 100, RetryCapDelayMs: 250}})
		var windows [][2]int
		mw := agent.LLMErrorHandling(agent.LLMErrorHandlingOptions{Calls: calls, Sleep: (&sleeps{}).sleep,
			Jitter: func(lo, hi int) int { windows = append(windows, [2]int{lo, hi}); return hi }})
		fm := &fakeModel{steps: []step{failWith(providerErr(503, "x")), failWith(providerErr(503, "x")), failWith(providerErr(503, "x")), answer("ok")}}
		_, err := newAgent(t, agent.Options{Model: fm, ModelMiddlewares: []tool.ModelMiddleware{mw}}).Invoke(t.Context(),
			agent.Input{Messages: []model.Message{model.UserText("hi")}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// base..min(cap, 3·seed): the seed is the base, then the last wait.
		if diff := cmp.Diff([][2]int{{100, 250}, {100, 250}, {100, 250}}, windows); diff != "" {
			t.Errorf("windows (-want +got):\n%s", diff)
		}
	})
}

// The run's cancellation is never retried nor answered: it stays a Go
// error, also while waiting between attempts.
func TestLLMErrorHandling_cancellationIsNotAnAnswer(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	fm := &fakeModel{steps: []step{failWith(providerErr(503, "x")), answer("never")}}
	mw := agent.LLMErrorHandling(agent.LLMErrorHandlingOptions{Sleep: func(ctx context.Context, _ time.Duration) error {
		cancel()
		return ctx.Err()
	}, Jitter: lowJitter})
	out, err := newAgent(t, agent.Options{Model: fm, ModelMiddlewares: []tool.ModelMiddleware{mw}}).Invoke(ctx,
		agent.Input{Messages: []model.Message{model.UserText("hi")}}, nil)
	if !errors.Is(err, context.Canceled) || out.Reason != agent.StopCancelled || fm.count() != 1 {
		t.Fatalf("err %v, reason %s, calls %d; want cancelled after one call", err, out.Reason, fm.count())
	}
}

// The circuit opens after failure_threshold calls that failed
// transiently after their retries, answers at once while open, lets one
// probe through after recovery_timeout_sec, and closes when it succeeds.
// Failures no retry can fix (quota, auth) and burst-rate limits never
// count.
func TestLLMErrorHandling_circuitBreaker(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	calls := agent.NewLLMCalls(agent.LLMCallsOptions{LLMCall: config.LLMCall{RetryMaxAttempts: 1},
		CircuitBreaker: config.CircuitBreaker{FailureThreshold: 2, RecoveryTimeoutSec: 60}})
	fm := &fakeModel{}
	mw := agent.LLMErrorHandling(agent.LLMErrorHandlingOptions{Calls: calls, ModelName: "m", Sleep: (&sleeps{}).sleep,
		Jitter: lowJitter, Now: func() time.Time { return now }})
	a := newAgent(t, agent.Options{Model: fm, ModelMiddlewares: []tool.ModelMiddleware{mw}})
	run := func(s step) (string, int) {
		t.Helper()
		fm.mu.Lock()
		fm.steps, fm.requests = []step{s}, nil
		fm.mu.Unlock()
		out, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("hi")}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		reason, _ := lastAssistant(t, out).Meta[agent.MetaErrorReason].(string)
		return reason, fm.count()
	}
	down := failWith(providerErr(503, "down"))
	steps := []struct {
		name       string
		advance    time.Duration
		step       step
		wantReason string
		wantCalls  int
	}{
		{"quota does not count", 0, failWith(providerErr(429, "insufficient_quota")), "quota", 1},
		{"first failure", 0, down, "transient", 1},
		{"auth does not count", 0, failWith(providerErr(401, "unauthorized")), "auth", 1},
		{"second failure opens", 0, down, "transient", 1},
		{"open: no call", 30 * time.Second, answer("x"), "circuit_open", 0},
		{"probe fails: open again", 31 * time.Second, down, "transient", 1},
		{"open again: no call", 59 * time.Second, answer("x"), "circuit_open", 0},
		{"probe succeeds: closed", 2 * time.Second, answer("back"), "", 1},
		{"closed: one failure does not open", 0, down, "transient", 1},
		{"still closed", 0, answer("fine"), "", 1},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		reason, n := run(s.step)
		if reason != s.wantReason || n != s.wantCalls {
			t.Errorf("%s: reason %q after %d calls, want %q after %d", s.name, reason, n, s.wantReason, s.wantCalls)
		}
	}
}

// gatedModel answers once released, counting the calls inside.
type gatedModel struct {
	entered chan struct{}
	release chan struct{}
}

func (b *gatedModel) step(*model.Request) ([]model.Event, error) {
	b.entered <- struct{}{}
	<-b.release
	return answer("ok")(nil)
}

// max_concurrent_calls bounds the calls in flight across agents sharing
// one LLMCalls, and a wait between attempts holds no slot.
func TestLLMErrorHandling_concurrencyCap(t *testing.T) {
	calls := agent.NewLLMCalls(agent.LLMCallsOptions{LLMCall: config.LLMCall{MaxConcurrentCalls: 1, RetryMaxAttempts: 2, RetryCapDelayMs: 10}})
	b := &gatedModel{entered: make(chan struct{}, 2), release: make(chan struct{})}
	newRun := func() *agent.Agent {
		mw := agent.LLMErrorHandling(agent.LLMErrorHandlingOptions{Calls: calls, Jitter: lowJitter})
		return newAgent(t, agent.Options{Model: &fakeModel{loop: b.step}, ModelMiddlewares: []tool.ModelMiddleware{mw}})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			_, err := newRun().Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("hi")}}, nil)
			errs <- err
		})
	}
	<-b.entered // one call is in
	if got := calls.InFlight(); got != 1 {
		t.Errorf("in flight = %d, want 1", got)
	}
	select {
	case <-b.entered:
		t.Fatal("a second call ran while the cap of 1 was held")
	default:
	}
	b.release <- struct{}{} // the first ends; the second may enter
	<-b.entered
	b.release <- struct{}{}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if calls.InFlight() != 0 {
		t.Errorf("in flight after the runs = %d", calls.InFlight())
	}

	// During the wait before a retry the slot is free.
	var during int
	mw := agent.LLMErrorHandling(agent.LLMErrorHandlingOptions{Calls: calls, Jitter: lowJitter,
		Sleep: func(ctx context.Context, _ time.Duration) error { during = calls.InFlight(); return nil }})
	fm := &fakeModel{steps: []step{failWith(providerErr(503, "x")), answer("ok")}}
	if _, err := newAgent(t, agent.Options{Model: fm, ModelMiddlewares: []tool.ModelMiddleware{mw}}).Invoke(t.Context(),
		agent.Input{Messages: []model.Message{model.UserText("hi")}}, nil); err != nil {
		t.Fatal(err)
	}
	if during != 0 {
		t.Errorf("in flight while waiting to retry = %d, want 0", during)
	}
}

// With a store, the fallback is saved as the thread's last message (the
// model reads it on the next turn), the run is recorded as error with the
// detail and the thread as error, as DeerFlow's worker records it; the
// next run on the thread starts from it.
func TestLLMErrorHandling_storedRunAndThread(t *testing.T) {
	st := openStore(t, t.TempDir())
	calls := agent.NewLLMCalls(agent.LLMCallsOptions{LLMCall: config.LLMCall{RetryMaxAttempts: 1}})
	fm := &fakeModel{steps: []step{failWith(providerErr(503, "down")), answer("back")}}
	mw := agent.LLMErrorHandling(agent.LLMErrorHandlingOptions{Calls: calls, Sleep: (&sleeps{}).sleep, Jitter: lowJitter})
	a := newAgent(t, agent.Options{Model: fm, Store: st, ModelMiddlewares: []tool.ModelMiddleware{mw}})
	ctx := t.Context()
	out, err := a.Invoke(ctx, agent.Input{ThreadID: "t1", RunID: "r1", Messages: []model.Message{model.UserText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.GetRun(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	detail := `model "m" (openai): HTTP 503 Service Unavailable: down`
	if run.Status != store.RunError || run.StopReason != "error" || run.Error != detail || out.Error != detail {
		t.Errorf("run = %s %s %q, outcome error %q; want error with %q", run.Status, run.StopReason, run.Error, out.Error, detail)
	}
	th, err := st.GetThread(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if th.Status != store.ThreadError {
		t.Errorf("thread status = %s, want error", th.Status)
	}
	if _, err := a.Invoke(ctx, agent.Input{ThreadID: "t1", RunID: "r2", Messages: []model.Message{model.UserText("again")}}, nil); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range fm.request(1).Messages {
		if m.Role != model.RoleSystem {
			roles = append(roles, string(m.Role)+":"+m.Content)
		}
	}
	want := []string{"user:hi", "assistant:" + unavailableText, "user:again"}
	if diff := cmp.Diff(want, roles); diff != "" {
		t.Errorf("the next request (-want +got):\n%s", diff)
	}
}

// A call waiting for a slot ends with its run's cancellation, without
// taking or leaking a slot (DeerFlow's limiter cancellation cases).
func TestLLMErrorHandling_capWaitCancelled(t *testing.T) {
	calls := agent.NewLLMCalls(agent.LLMCallsOptions{LLMCall: config.LLMCall{MaxConcurrentCalls: 1, RetryMaxAttempts: 1}})
	g := &gatedModel{entered: make(chan struct{}, 1), release: make(chan struct{})}
	holder := newAgent(t, agent.Options{Model: &fakeModel{loop: g.step},
		ModelMiddlewares: []tool.ModelMiddleware{agent.LLMErrorHandling(agent.LLMErrorHandlingOptions{Calls: calls})}})
	done := make(chan error, 1)
	go func() {
		_, err := holder.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("hi")}}, nil)
		done <- err
	}()
	<-g.entered
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// The middleware itself, so that the slot is the only thing to wait
	// for: the cap is held, so the call can only end by its context.
	reached := false
	h := agent.LLMErrorHandling(agent.LLMErrorHandlingOptions{Calls: calls})(
		func(context.Context, *tool.ModelCall) (*model.Response, error) { reached = true; return nil, nil })
	resp, err := h(ctx, &tool.ModelCall{Request: &model.Request{}})
	if !errors.Is(err, context.Canceled) || resp != nil || reached {
		t.Errorf("resp %v, err %v, model reached %v; want the context's error before the model", resp, err, reached)
	}
	if calls.InFlight() != 1 {
		t.Errorf("in flight = %d, want the holder's 1", calls.InFlight())
	}
	g.release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if calls.InFlight() != 0 {
		t.Errorf("in flight after both = %d", calls.InFlight())
	}
}
