package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
)

// fakeProvider answers with decide, and keeps the requests it saw.
type fakeProvider struct {
	decide func(*Request) (Decision, error)
	mu     sync.Mutex
	seen   []*Request
}

func (p *fakeProvider) Name() string { return "fake" }

func (p *fakeProvider) Evaluate(_ context.Context, req *Request) (Decision, error) {
	p.mu.Lock()
	p.seen = append(p.seen, req)
	p.mu.Unlock()
	return p.decide(req)
}

func (p *fakeProvider) last(t *testing.T) *Request {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) == 0 {
		t.Fatal("provider never asked")
	}
	return p.seen[len(p.seen)-1]
}

func allowAll() *fakeProvider {
	return &fakeProvider{decide: func(*Request) (Decision, error) {
		return Decision{Allow: true, Reasons: []Reason{{Code: CodeAllowed}}}, nil
	}}
}

func denyAll() *fakeProvider {
	return &fakeProvider{decide: func(*Request) (Decision, error) {
		return Decision{Reasons: []Reason{{Code: "oap.denied", Message: "all tools blocked"}}, PolicyID: "test.deny.v1"}, nil
	}}
}

func exploding() *fakeProvider {
	return &fakeProvider{decide: func(*Request) (Decision, error) { return Decision{}, errors.New("provider crashed") }}
}

// recorder is a fake audit sink (DeerFlow's _FakeJournal).
type recorder struct {
	fail   bool
	mu     sync.Mutex
	events []Event
}

func (r *recorder) record(_ context.Context, ev Event) error {
	if r.fail {
		return errors.New("journal unavailable")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil
}

// handlerProbe is a tool handler that counts its runs.
type handlerProbe struct {
	mu   sync.Mutex
	runs int
}

func (h *handlerProbe) handle(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
	h.mu.Lock()
	h.runs++
	h.mu.Unlock()
	return tool.Text("tool ran"), nil
}

func newGuard(t *testing.T, opts Options) *Guard {
	t.Helper()
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// run calls the tool name through g's middleware with the runtime context rc.
func run(t *testing.T, g *Guard, name string, rc map[string]any) (*tool.Result, *handlerProbe, error) {
	t.Helper()
	h := &handlerProbe{}
	call := &tool.Call{ID: "call_1", Name: name, Context: rc}
	res, err := tool.Chain(h.handle, g.ToolMiddleware())(context.Background(), call, json.RawMessage(`{}`))
	return res, h, err
}

func TestGuard_allowedToolPassesThrough(t *testing.T) {
	res, h, err := run(t, newGuard(t, Options{Provider: allowAll()}), "web_search", nil)
	if err != nil || h.runs != 1 || res.TextContent() != "tool ran" {
		t.Errorf("runs %d, result %q, err %v", h.runs, res.TextContent(), err)
	}
}

func TestGuard_deniedToolReturnsErrorResultAndNeverRuns(t *testing.T) {
	res, h, err := run(t, newGuard(t, Options{Provider: denyAll()}), "bash", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "Guardrail denied: tool 'bash' was blocked (oap.denied). Reason: all tools blocked. Choose an alternative approach."
	if h.runs != 0 || !res.IsError || res.TextContent() != want {
		t.Errorf("runs %d, IsError %v, text %q", h.runs, res.IsError, res.TextContent())
	}
}

func TestGuard_failClosedOnProviderError(t *testing.T) {
	res, h, err := run(t, newGuard(t, Options{Provider: exploding()}), "bash", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "Guardrail denied: tool 'bash' was blocked (oap.evaluator_error). Reason: guardrail provider error (fail-closed). Choose an alternative approach."
	if h.runs != 0 || !res.IsError || res.TextContent() != want {
		t.Errorf("runs %d, IsError %v, text %q", h.runs, res.IsError, res.TextContent())
	}
}

func TestGuard_failOpenOnProviderError(t *testing.T) {
	res, h, err := run(t, newGuard(t, Options{Provider: exploding(), FailOpen: true}), "bash", nil)
	if err != nil || h.runs != 1 || res.IsError {
		t.Errorf("runs %d, result %+v, err %v", h.runs, res, err)
	}
}

func TestGuard_passportIsSentAsAgentID(t *testing.T) {
	p := allowAll()
	if _, _, err := run(t, newGuard(t, Options{Provider: p, Passport: "./guardrails/passport.json"}), "bash", nil); err != nil {
		t.Fatal(err)
	}
	if got := p.last(t).AgentID; got != "./guardrails/passport.json" {
		t.Errorf("agent_id %q", got)
	}
}

func TestGuard_denyWithEmptyReasonsUsesFallbackText(t *testing.T) {
	p := &fakeProvider{decide: func(*Request) (Decision, error) { return Decision{}, nil }}
	res, h, _ := run(t, newGuard(t, Options{Provider: p}), "bash", nil)
	want := "Guardrail denied: tool 'bash' was blocked (oap.denied). Reason: blocked by guardrail policy. Choose an alternative approach."
	if h.runs != 0 || !res.IsError || res.TextContent() != want {
		t.Errorf("runs %d, text %q", h.runs, res.TextContent())
	}
}

func TestGuard_emptyToolNameIsEvaluated(t *testing.T) {
	p := allowAll()
	res, h, err := run(t, newGuard(t, Options{Provider: p}), "", nil)
	if err != nil || h.runs != 1 || res.IsError || p.last(t).ToolName != "" {
		t.Errorf("runs %d, result %+v, err %v", h.runs, res, err)
	}
}

func TestGuard_nilGuardHasNoMiddleware(t *testing.T) {
	var g *Guard
	if g.ToolMiddleware() != nil {
		t.Error("a nil guard returned a middleware")
	}
	if res, err := g.Check(context.Background(), &tool.Call{Name: "bash"}, nil); res != nil || err != nil {
		t.Errorf("nil guard Check = %v, %v", res, err)
	}
	if _, err := New(Options{}); err == nil {
		t.Error("New without a provider succeeded")
	}
}

// DeerFlow's GraphBubbleUp tests: a control signal is never a provider
// failure. In Go that signal is cancellation: it stops the run whatever
// fail_closed says, and the tool does not run.
func TestGuard_cancellationIsNotAProviderFailure(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		p := &fakeProvider{decide: func(*Request) (Decision, error) { cancel(); return Decision{}, context.Canceled }}
		g := newGuard(t, Options{Provider: p, FailOpen: failOpen})
		h := &handlerProbe{}
		res, err := tool.Chain(h.handle, g.ToolMiddleware())(ctx, &tool.Call{Name: "bash"}, nil)
		if !errors.Is(err, context.Canceled) || res != nil || h.runs != 0 {
			t.Errorf("fail open %v: result %v, err %v, runs %d", failOpen, res, err, h.runs)
		}
	}
}

// DeerFlow's async tests (test_async_allowed, _denied, _fail_closed,
// _fail_open): Go has one path, which the agent loop runs for concurrent
// calls; each call gets its own decision.
func TestGuard_concurrentCallsAreDecidedEachOnItsOwn(t *testing.T) {
	p := &fakeProvider{decide: func(r *Request) (Decision, error) {
		switch r.ToolName {
		case "web_search":
			return Decision{Allow: true}, nil
		case "bash":
			return Decision{Reasons: []Reason{{Code: "oap.denied", Message: "no"}}}, nil
		}
		return Decision{}, errors.New("provider crashed")
	}}
	for _, failOpen := range []bool{false, true} {
		g := newGuard(t, Options{Provider: p, FailOpen: failOpen})
		var wg sync.WaitGroup
		ran := map[string]bool{}
		var mu sync.Mutex
		for _, name := range []string{"web_search", "bash", "broken"} {
			wg.Go(func() {
				res, h, err := run(t, g, name, nil)
				if err != nil || res == nil {
					t.Errorf("%s: %v", name, err)
				}
				mu.Lock()
				ran[name] = h.runs == 1
				mu.Unlock()
			})
		}
		wg.Wait()
		want := map[string]bool{"web_search": true, "bash": false, "broken": failOpen}
		if diff := cmp.Diff(want, ran); diff != "" {
			t.Errorf("fail open %v: ran (-want +got):\n%s", failOpen, diff)
		}
	}
}

func TestGuard_deniedCallRecordsAuditEvent(t *testing.T) {
	rec := &recorder{}
	g := newGuard(t, Options{Provider: denyAll(), Passport: "agent_id", Record: rec.record})
	h := &handlerProbe{}
	call := &tool.Call{ID: "tool_call_1", Name: "bash", Context: map[string]any{"user_role": "user", "user_id": "u1"}}
	res, err := tool.Chain(h.handle, g.ToolMiddleware())(context.Background(), call, json.RawMessage(`{"command":"cat secret.txt"}`))
	if err != nil || !res.IsError {
		t.Fatalf("result %+v, err %v", res, err)
	}
	want := []Event{{Action: ActionDeny, ToolName: "bash", ToolCallID: "tool_call_1", AgentID: "agent_id", UserRole: "user",
		PolicyID: "test.deny.v1", ReasonCodes: []string{"oap.denied"}, ReasonMessages: []string{"all tools blocked"}, FailClosed: true}}
	if diff := cmp.Diff(want, rec.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	data, _ := json.Marshal(rec.events[0])
	for _, leak := range []string{"cat secret", "tool_input", "command", "user_id", "oauth"} {
		if strings.Contains(string(data), leak) {
			t.Errorf("audit event %s contains %q", data, leak)
		}
	}
}

func TestGuard_failClosedProviderErrorRecordsDeny(t *testing.T) {
	rec := &recorder{}
	res, h, _ := run(t, newGuard(t, Options{Provider: exploding(), Record: rec.record}), "bash", nil)
	if h.runs != 0 || !res.IsError || len(rec.events) != 1 {
		t.Fatalf("runs %d, events %+v", h.runs, rec.events)
	}
	ev := rec.events[0]
	if ev.Action != ActionDeny || ev.Allow || !ev.ProviderError || !ev.FailClosed ||
		!cmp.Equal(ev.ReasonCodes, []string{CodeEvaluatorError}) {
		t.Errorf("event %+v", ev)
	}
}

func TestGuard_failOpenProviderErrorRecordsAndRuns(t *testing.T) {
	rec := &recorder{}
	_, h, _ := run(t, newGuard(t, Options{Provider: exploding(), FailOpen: true, Record: rec.record}), "bash", nil)
	if h.runs != 1 || len(rec.events) != 1 {
		t.Fatalf("runs %d, events %+v", h.runs, rec.events)
	}
	ev := rec.events[0]
	if ev.Action != ActionAllowAfterProviderError || !ev.Allow || !ev.ProviderError || ev.FailClosed ||
		!cmp.Equal(ev.ReasonCodes, []string{CodeEvaluatorError}) {
		t.Errorf("event %+v", ev)
	}
}

func TestGuard_allowedCallRecordsNothing(t *testing.T) {
	rec := &recorder{}
	if _, _, err := run(t, newGuard(t, Options{Provider: allowAll(), Record: rec.record}), "web_search", nil); err != nil {
		t.Fatal(err)
	}
	if len(rec.events) != 0 {
		t.Errorf("events %+v", rec.events)
	}
}

func TestGuard_recordingFailureWarnsWithoutChangingDenial(t *testing.T) {
	var logs strings.Builder
	rec := &recorder{fail: true}
	g := newGuard(t, Options{Provider: denyAll(), Record: rec.record, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	res, h, _ := run(t, g, "bash", nil)
	if h.runs != 0 || !res.IsError || !strings.Contains(res.TextContent(), "oap.denied") {
		t.Errorf("runs %d, result %q", h.runs, res.TextContent())
	}
	if !strings.Contains(logs.String(), "Failed to record middleware:guardrail event") {
		t.Errorf("log %q lacks the warning", logs.String())
	}
}

func TestGuard_longReasonMessagesAreClippedInEvents(t *testing.T) {
	rec := &recorder{}
	long := strings.Repeat("é", 700)
	p := &fakeProvider{decide: func(*Request) (Decision, error) {
		return Decision{Reasons: []Reason{{Code: "x", Message: long}, {Code: "", Message: ""}}}, nil
	}}
	run(t, newGuard(t, Options{Provider: p, Record: rec.record}), "bash", nil)
	ev := rec.events[0]
	if len(ev.ReasonCodes) != 1 || len(ev.ReasonMessages) != 1 || len([]rune(ev.ReasonMessages[0])) != 500 {
		t.Errorf("codes %v, %d messages of %d runes", ev.ReasonCodes, len(ev.ReasonMessages), len([]rune(ev.ReasonMessages[0])))
	}
}

// Without a recorder, the audit event of a deny is logged.
func TestGuard_auditEventIsLoggedWithoutRecorder(t *testing.T) {
	var logs strings.Builder
	g := newGuard(t, Options{Provider: denyAll(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	run(t, g, "bash", map[string]any{"user_role": "user"})
	for _, want := range []string{"msg=middleware:guardrail", "action=deny_tool_call", "tool=bash", "user_role=user",
		"policy_id=test.deny.v1", "reason_codes=[oap.denied]"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log %q lacks %q", logs.String(), want)
		}
	}
}
