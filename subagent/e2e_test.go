package subagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/subagent"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// taskCalls returns n task calls with distinct prompts.
func taskCalls(n int) []model.ToolCall {
	out := make([]model.ToolCall, n)
	for i := range out {
		args, _ := json.Marshal(map[string]string{"description": fmt.Sprintf("part %d", i),
			"prompt": fmt.Sprintf("analyse part %d", i), "subagent_type": "general-purpose"})
		out[i] = model.ToolCall{ID: fmt.Sprintf("task_%d", i), Name: builtin.TaskName, Arguments: args}
	}
	return out
}

// barrier blocks each caller until n callers have arrived (or a minute
// passed, which the test then reports).
type barrier struct {
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait() bool {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return true
	case <-time.After(time.Minute):
		return false
	}
}

// runLead runs a lead agent whose first answer is calls and whose second
// sums up, with the task tool bound and the limit middleware in place.
func runLead(t testing.TB, h *harness, calls []model.ToolCall, limits subagent.Limits) ([]agent.Event, *agent.Outcome) {
	t.Helper()
	lead := modeltest.FromScript(modeltest.Script{
		Turns: []modeltest.Turn{{Text: "Delegating.", ToolCalls: calls}},
		Rules: []modeltest.Rule{{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: "All parts analysed."}}},
	})
	a, err := agent.New(agent.Options{Model: lead, Tools: []*tool.Tool{h.task}, ToolConcurrency: len(calls),
		ModelMiddlewares: []tool.ModelMiddleware{subagent.LimitMiddleware(limits)}})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		events []agent.Event
	)
	out, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t1", UserID: "u1", RunID: "run1",
		Messages: []model.Message{model.UserText("Analyse the parts.")},
		State:    &thread.State{Sandbox: &thread.Sandbox{SandboxID: "local"}},
		Context:  map[string]any{"model_name": "worker"}},
		func(ev agent.Event) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		})
	if err != nil {
		t.Fatal(err)
	}
	return events, out
}

// The lead launches three tasks in one message; they run at the same
// time, each one's events arrive in order, and the lead reads three
// results.
func TestEndToEnd_ThreeConcurrentTasks(t *testing.T) {
	b := newBarrier(3)
	worker := modeltest.FromScript(modeltest.Script{Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Reply: modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			// Each subagent's first model call waits for the other two:
			// run one at a time, they would never get past here.
			if !b.wait() {
				return modeltest.Turn{Text: "NOT CONCURRENT"}
			}
			return modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls"}}}
		}}},
		{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: "part done"}},
	}})
	h := newHarness(t, baseConfig, map[string]model.ChatModel{"worker": worker}, nil)
	events, out := runLead(t, h, taskCalls(3), subagent.Limits{MaxConcurrent: 3, MaxTotal: 6})

	type span struct{ start, end int } // positions in the event stream
	spans := map[string]*span{}
	perTask := map[string][]string{}
	for i, ev := range events {
		if !strings.HasPrefix(string(ev.Type), "task_") {
			continue
		}
		id := ev.ToolCallID
		perTask[id] = append(perTask[id], string(ev.Type))
		if spans[id] == nil {
			spans[id] = &span{start: -1}
		}
		switch ev.Type {
		case agent.EventTaskStarted:
			spans[id].start = i
		case agent.EventTaskCompleted:
			spans[id].end = i
		}
	}
	want := []string{"task_started", "task_running", "task_running", "task_completed"}
	for i := range 3 {
		id := fmt.Sprintf("task_%d", i)
		if got := perTask[id]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s events = %v, want %v", id, got, want)
		}
	}
	// Overlap: every task started before any task ended.
	for a, sa := range spans {
		for b, sb := range spans {
			if sa.start > sb.end {
				t.Errorf("%s started after %s ended: not concurrent", a, b)
			}
		}
	}
	var results []string
	for _, m := range out.State.Messages {
		if m.Role == model.RoleTool && m.Name == builtin.TaskName {
			results = append(results, m.Content)
			if m.Meta[builtin.MetaSubagentStatus] != "completed" {
				t.Errorf("result meta = %v", m.Meta)
			}
		}
	}
	if len(results) != 3 {
		t.Fatalf("lead received %d task results, want 3", len(results))
	}
	for _, r := range results {
		if r != "Task Succeeded. Result: part done" {
			t.Errorf("result = %q", r)
		}
	}
	if got := len(out.State.Delegations); got != 3 {
		t.Errorf("delegations = %d, want 3", got)
	}
	if last := out.State.Messages[len(out.State.Messages)-1]; last.Content != "All parts analysed." {
		t.Errorf("final answer = %q", last.Content)
	}
}

// A hung subagent times out with status timed_out, and nothing is left
// running afterwards.
func TestHungSubagentTimesOut(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	hung := modeltest.New(modeltest.Turn{Text: "never", Delay: time.Hour})
	h := newHarness(t, baseConfig+"subagents:\n  agents:\n    general-purpose: {timeout_seconds: 1}\n",
		map[string]model.ChatModel{"worker": hung}, nil)
	var rec recorder
	res, err := h.callTask(t.Context(), &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.TextContent(), "Task timed out. Error: Execution timed out after 1 seconds"; got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
	if res.Meta[builtin.MetaSubagentStatus] != "timed_out" || rec.last().name != builtin.EventTaskTimedOut {
		t.Errorf("meta %v, last event %q", res.Meta, rec.last().name)
	}
	waitFor(t, "cleanup", func() bool { return h.exec.Running() == 0 })
	if err := h.exec.Close(); err != nil {
		t.Fatal(err)
	}
}

// Two hundred tasks in one message run to completion when the caps and
// the worker pool are configured for it.
func TestBatch_TwoHundredTasks(t *testing.T) {
	const n = 200
	worker := modeltest.FromScript(modeltest.Script{NoRecord: true, Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Reply: modeltest.Turn{Text: "done: {last}"}},
	}})
	yaml := baseConfig + "subagents:\n  max_concurrent: 200\n  max_total_per_run: 200\n  workers: 64\n"
	h := newHarness(t, yaml, map[string]model.ChatModel{"worker": worker}, nil)
	if h.exec.Workers() != 64 {
		t.Fatalf("Workers() = %d, want 64", h.exec.Workers())
	}
	limits := subagent.ResolveLimits(h.cfg.Subagents, 0, 0)
	_, out := runLead(t, h, taskCalls(n), limits)
	done := 0
	seen := map[string]bool{}
	for _, m := range out.State.Messages {
		if m.Role == model.RoleTool && m.Name == builtin.TaskName {
			if m.Meta[builtin.MetaSubagentStatus] == "completed" {
				done++
			}
			seen[m.Content] = true
		}
	}
	if done != n || len(seen) != n {
		t.Errorf("%d of %d tasks completed with %d distinct results", done, n, len(seen))
	}
	if worker.Calls() != n {
		t.Errorf("worker model calls = %d, want %d", worker.Calls(), n)
	}
}

// The default caps (3 per response) cut a batch down, keeping the first
// calls.
func TestBatch_DefaultCapsTruncate(t *testing.T) {
	worker := modeltest.FromScript(modeltest.Script{Rules: []modeltest.Rule{{Reply: modeltest.Turn{Text: "ok"}}}})
	h := newHarness(t, baseConfig, map[string]model.ChatModel{"worker": worker}, nil)
	_, out := runLead(t, h, taskCalls(10), subagent.ResolveLimits(h.cfg.Subagents, 0, 0))
	var ids []string
	for _, d := range out.State.Delegations {
		ids = append(ids, d.ID)
	}
	if fmt.Sprint(ids) != "[task_0 task_1 task_2]" {
		t.Errorf("delegated %v, want the first three", ids)
	}
}

// A token budget that runs out drops the pending tool calls and keeps the
// answer so far with DeerFlow's exceeded text: completed with stop reason
// token_capped.
func TestTokenBudgetCaps(t *testing.T) {
	big := &model.Usage{InputTokens: 900, OutputTokens: 200, TotalTokens: 1100}
	m := modeltest.New(modeltest.Turn{Text: "partial findings", ToolCalls: []model.ToolCall{{Name: "ls"}}, Usage: big})
	yaml := baseConfig + "subagents:\n  agents:\n    general-purpose:\n      token_budget: {max_tokens: 1000}\n"
	h := newHarness(t, yaml, map[string]model.ChatModel{"worker": m}, nil)
	var rec recorder
	res, err := h.callTask(context.Background(), &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.TextContent(), "Task Succeeded (capped: token budget). Result: partial findings\n\n"+
		"[TOKEN BUDGET EXCEEDED] The total token usage (1,100) has exceeded the safety limit (1,000). "+
		"Producing final answer with results collected so far."; got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
	if res.Meta[builtin.MetaSubagentStopReason] != "token_capped" {
		t.Errorf("meta = %v", res.Meta)
	}
}

// Workers bounds the tasks that run at once; the rest wait for a worker.
func TestWorkersBound(t *testing.T) {
	var (
		mu            sync.Mutex
		running, peak int
	)
	worker := modeltest.FromScript(modeltest.Script{Rules: []modeltest.Rule{{Reply: modeltest.Turn{Func: func(*model.Request) modeltest.Turn {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return modeltest.Turn{Text: "ok"}
	}}}}})
	h := newHarness(t, baseConfig+"subagents:\n  workers: 2\n  max_concurrent: 8\n", map[string]model.ChatModel{"worker": worker}, nil)
	_, out := runLead(t, h, taskCalls(8), subagent.ResolveLimits(h.cfg.Subagents, 0, 8))
	if got := len(out.State.Delegations); got != 8 {
		t.Fatalf("%d tasks ran, want 8", got)
	}
	if peak > 2 {
		t.Errorf("%d tasks ran at once, want at most 2 workers", peak)
	}
}

// Loop detection's forced stop keeps the answer: completed, loop_capped.
func TestLoopCapped(t *testing.T) {
	m := modeltest.FromScript(modeltest.Script{Rules: []modeltest.Rule{
		{Reply: modeltest.Turn{Text: "checking", ToolCalls: []model.ToolCall{{Name: "ls", Arguments: json.RawMessage(`{"path":"/"}`)}}}}}})
	h := newHarness(t, baseConfig, map[string]model.ChatModel{"worker": m}, nil)
	var rec recorder
	res, err := h.callTask(t.Context(), &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.TextContent(); !strings.HasPrefix(got, "Task Succeeded (capped: repeated tool-call loop). Result: checking") {
		t.Errorf("content = %q", got)
	}
	if res.Meta[builtin.MetaSubagentStopReason] != "loop_capped" {
		t.Errorf("meta = %v", res.Meta)
	}
}

// Past warn_threshold the next request carries one budget warning.
func TestTokenBudgetWarns(t *testing.T) {
	u := &model.Usage{InputTokens: 700, OutputTokens: 100, TotalTokens: 800}
	m := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls"}}, Usage: u},
		modeltest.Turn{Text: "done", Usage: &model.Usage{}})
	yaml := baseConfig + "subagents:\n  token_budget: {max_tokens: 1000, warn_threshold: 0.7}\n"
	h := newHarness(t, yaml, map[string]model.ChatModel{"worker": m}, nil)
	var rec recorder
	res, err := h.callTask(t.Context(), &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`)
	if err != nil {
		t.Fatal(err)
	}
	if res.TextContent() != "Task Succeeded. Result: done" {
		t.Errorf("content = %q", res.TextContent())
	}
	last := modeltest.LastMessage(m.Requests()[1])
	want := "[TOKEN BUDGET WARNING] You have used 800 of your 1,000 total token budget (80%). Wrap up your current work " +
		"and produce a final answer. Avoid starting new tool calls unless absolutely necessary."
	if last.Role != model.RoleUser || last.Name != agent.TokenBudgetWarningName || last.Content != want {
		t.Errorf("second request ends with %+v", last)
	}
}
