package subagent_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/subagent"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

const customAgents = `
subagents:
  custom_agents:
    researcher:
      description: Research things
      system_prompt: You research.
      skills: [b, c]
      model: vision
`

// answers is a worker model that lists the directory, then answers.
func answers(text string) *modeltest.Model {
	return modeltest.FromScript(modeltest.Script{Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Reply: modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls"}}}},
		{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: text}},
	}})
}

func TestUnknownTypeAndBashDisabled(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		typ     string
		want    string
		wantErr string
	}{
		{
			name: "unknown type lists available types without bash",
			yaml: baseConfig + customAgents, typ: "nope",
			want: "Task failed. Error: Unknown subagent type 'nope'. Available: general-purpose, researcher",
		},
		{
			name: "unknown type lists bash when host bash is allowed",
			yaml: baseConfig + "sandbox:\n  use: deerflow.sandbox.local:LocalSandboxProvider\n  allow_host_bash: true\n", typ: "nope",
			want: "Task failed. Error: Unknown subagent type 'nope'. Available: general-purpose, bash",
		},
		{
			name: "bash refused when host bash is off",
			yaml: baseConfig, typ: "bash",
			want: "Task failed. Error: " + subagent.BashDisabledMessage,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.yaml, nil, nil)
			var rec recorder
			res, err := h.callTask(t.Context(), &rec, nil,
				`{"description":"x","prompt":"do it","subagent_type":"`+tc.typ+`"}`)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.TextContent(); got != tc.want {
				t.Errorf("content = %q\nwant      %q", got, tc.want)
			}
			if res.Meta[builtin.MetaSubagentStatus] != "failed" || res.Meta[builtin.MetaSubagentError] == nil {
				t.Errorf("meta = %v, want failed status with error", res.Meta)
			}
			if len(rec.names()) != 0 {
				t.Errorf("events = %v, want none for a type that never started", rec.names())
			}
			if d := res.Update.Delegations; len(d) != 1 || d[0].Status != "failed" || d[0].RunID != "run1" {
				t.Errorf("delegations = %+v, want one failed entry of run1", d)
			}
		})
	}
}

func TestToolGroupsSkillsAndModelOverride(t *testing.T) {
	vision, worker := answers("seen"), answers("done")
	h := newHarness(t, baseConfig+customAgents, map[string]model.ChatModel{"vision": vision, "worker": worker}, nil)
	var rec recorder
	rc := map[string]any{"model_name": "worker", "tool_groups": []string{"file:read"}, "available_skills": []any{"a", "b"}}
	res, err := h.callTask(t.Context(), &rec, rc, `{"description":"look","prompt":"look around","subagent_type":"researcher"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.TextContent(); got != "Task Succeeded. Result: seen" {
		t.Fatalf("content = %q", got)
	}
	if worker.Calls() != 0 || vision.Calls() != 2 {
		t.Errorf("calls: worker %d, vision %d; want the researcher's own model (vision) only", worker.Calls(), vision.Calls())
	}
	// The parent's tool groups filter config tools (web_search is in
	// "web"); the override model supports vision, so view_image is
	// assembled; no task, present_files or ask_clarification.
	req := vision.Requests()[0]
	if got, want := modeltest.ToolNames(req), []string{"ls", "hang", "view_image"}; !cmp.Equal(got, want) {
		t.Errorf("subagent tools = %v, want %v", got, want)
	}
	if got := h.skills; !cmp.Equal(got, [][]string{{"b"}}) {
		t.Errorf("skills allowlists = %v, want [[b]] (parent [a b] ∩ child [b c])", got)
	}
	if sys := req.Messages[0]; sys.Role != model.RoleSystem || !strings.HasPrefix(sys.Content, "You research.") ||
		!strings.Contains(sys.Content, "<skills/>") {
		t.Errorf("system prompt = %q", sys.Content)
	}
	if len(req.Messages) != 2 || req.Messages[1].Content != "--- BEGIN USER INPUT ---\nlook around\n--- END USER INPUT ---" {
		t.Errorf("subagent history = %+v, want only the task prompt (no parent history)", req.Messages[1:])
	}
	if got := rec.events[0].data["model_name"]; got != "vision" {
		t.Errorf("task_started model_name = %v, want vision", got)
	}
}

func TestMergeSkillAllowlists(t *testing.T) {
	tests := []struct {
		name          string
		parent, child []string
		want          []string
	}{
		{"parent nil takes child", nil, []string{"a"}, []string{"a"}},
		{"both nil", nil, nil, nil},
		{"child nil takes parent", []string{"a", "b"}, nil, []string{"a", "b"}},
		{"intersection in child order", []string{"a", "b", "c"}, []string{"c", "x", "a"}, []string{"c", "a"}},
		{"empty parent allows none", []string{}, []string{"a"}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := builtin.MergeSkillAllowlists(tc.parent, tc.child)
			if !cmp.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

// The event sequence of each terminal status,
// with cumulative usage, and cleanup of finished executions.
func TestEventSequence(t *testing.T) {
	usage := &model.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}
	tests := []struct {
		name       string
		yaml       string
		model      *modeltest.Model
		wantEvents []string
		wantText   string
		wantUsage  any
	}{
		{
			name: "completed",
			yaml: baseConfig,
			model: modeltest.New(
				modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls"}}, Usage: usage},
				modeltest.Turn{Text: "found it", Usage: usage}),
			wantEvents: []string{"task_started", "task_running", "task_running", "task_completed"},
			wantText:   "Task Succeeded. Result: found it",
			wantUsage:  map[string]int64{"input_tokens": 20, "output_tokens": 10, "total_tokens": 30},
		},
		{
			// The failed model call is answered with the error fallback
			// message (one more task_running, as DeerFlow's executor
			// reports every assistant message) and fails the task.
			name: "failed",
			yaml: baseConfig + "llm_call:\n  retry_max_attempts: 1\n",
			model: modeltest.New(
				modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls"}}, Usage: usage},
				modeltest.Turn{Status: 500, Error: "boom"}),
			wantEvents: []string{"task_started", "task_running", "task_running", "task_failed"},
			wantText:   "Task failed. Error: The configured LLM provider is temporarily unavailable after multiple retries.",
			wantUsage:  map[string]int64{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
		},
		{
			name:       "timed out",
			yaml:       baseConfig + "subagents:\n  timeout_seconds: 1\n",
			model:      modeltest.New(modeltest.Turn{Text: "late", Delay: time.Minute}),
			wantEvents: []string{"task_started", "task_timed_out"},
			wantText:   "Task timed out. Error: Execution timed out after 1 seconds",
		},
		{
			name: "turn capped without an answer",
			yaml: baseConfig + "subagents:\n  max_turns: 2\n",
			model: modeltest.FromScript(modeltest.Script{Rules: []modeltest.Rule{
				{Reply: modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls", Arguments: json.RawMessage(`{"n":1}`)}}}}}}),
			wantEvents: []string{"task_started", "task_running", "task_running", "task_failed"},
			wantText:   "Task failed (capped: turn budget). Error: ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.yaml, map[string]model.ChatModel{"worker": tc.model}, nil)
			var rec recorder
			res, err := h.callTask(t.Context(), &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`)
			if err != nil {
				t.Fatal(err)
			}
			if got := rec.names(); !cmp.Equal(got, tc.wantEvents) {
				t.Errorf("events = %v, want %v", got, tc.wantEvents)
			}
			if got := res.TextContent(); !strings.HasPrefix(got, tc.wantText) {
				t.Errorf("content = %q, want prefix %q", got, tc.wantText)
			}
			for i, e := range rec.events {
				if e.data["task_id"] != "call_1" || e.data["type"] != e.name {
					t.Errorf("event %d = %v, want task_id call_1 and its type", i, e.data)
				}
				if e.name == "task_running" && e.data["message_index"] != i {
					t.Errorf("event %d message_index = %v, want %d", i, e.data["message_index"], i)
				}
			}
			last := rec.last()
			if tc.wantUsage != nil && !cmp.Equal(last.data["usage"], tc.wantUsage) {
				t.Errorf("terminal usage = %v, want %v", last.data["usage"], tc.wantUsage)
			}
			if tc.wantUsage != nil && !cmp.Equal(res.Meta[builtin.MetaSubagentTokenUsage], tc.wantUsage) {
				t.Errorf("meta usage = %v, want %v", res.Meta[builtin.MetaSubagentTokenUsage], tc.wantUsage)
			}
			if got := res.Meta[builtin.MetaSubagentModelName]; got != "worker" {
				t.Errorf("meta model = %v, want worker", got)
			}
			waitFor(t, "the execution to leave the registry", func() bool { return h.exec.Running() == 0 })
		})
	}
}

// A task that outlives its timeout and ignores
// cancellation is reported polling_timed_out; its execution stays
// registered until it really stops (deferred cleanup, not immediate).
func TestPollingTimeoutDefersCleanup(t *testing.T) {
	m := modeltest.FromScript(modeltest.Script{Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Reply: modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "hang"}}}},
		{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: "too late"}},
	}})
	h := newHarness(t, baseConfig+"subagents:\n  timeout_seconds: 1\n", map[string]model.ChatModel{"worker": m},
		func(o *subagent.Options) { o.PollGrace = 50 * time.Millisecond })
	var rec recorder
	res, err := h.callTask(t.Context(), &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "Task polling timed out after 0 minutes. This may indicate the background task is stuck. Status: running"
	if got := res.TextContent(); got != want {
		t.Errorf("content = %q\nwant      %q", got, want)
	}
	if res.Meta[builtin.MetaSubagentStatus] != "polling_timed_out" {
		t.Errorf("meta = %v", res.Meta)
	}
	if got := rec.last(); got.name != "task_timed_out" || got.data["status"] != "polling_timed_out" {
		t.Errorf("last event = %+v", got)
	}
	if n := h.exec.Running(); n != 1 {
		t.Fatalf("Running() = %d right after polling timeout, want 1 (cleanup deferred until the task stops)", n)
	}
	close(h.release)
	waitFor(t, "deferred cleanup", func() bool { return h.exec.Running() == 0 })
	if got := len(rec.names()); got != 3 {
		t.Errorf("events after the tool returned = %v, want no more after the terminal one", rec.names())
	}
}

// Cancelling the parent cancels the task
// cooperatively and reports its usage once.
func TestParentCancellation(t *testing.T) {
	usage := &model.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5}
	started := make(chan struct{})
	m := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls"}}, Usage: usage},
		modeltest.Turn{Func: func(*model.Request) modeltest.Turn {
			close(started)
			return modeltest.Turn{Text: "never", Delay: time.Minute}
		}},
	)
	h := newHarness(t, baseConfig, map[string]model.ChatModel{"worker": m}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-started; cancel() }()
	var rec recorder
	res, err := h.callTask(ctx, &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`)
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("got %v, %v; want no result and context.Canceled", res, err)
	}
	names := rec.names()
	if got := slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s != "task_cancelled" }); len(got) != 1 {
		t.Errorf("events = %v, want exactly one task_cancelled", names)
	}
	if got, want := rec.last().data["usage"], map[string]int64{"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}; !cmp.Equal(got, want) {
		t.Errorf("cancelled usage = %v, want %v", got, want)
	}
	waitFor(t, "cleanup", func() bool { return h.exec.Running() == 0 })
}

func TestLargeResultBrief(t *testing.T) {
	long := strings.Repeat("a", 3000) + strings.Repeat("z", 3000)
	h := newHarness(t, baseConfig, map[string]model.ChatModel{"worker": modeltest.New(modeltest.Turn{Text: long})}, nil)
	var rec recorder
	res, err := h.callTask(t.Context(), &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.TextContent(); got != "Task Succeeded. Result: "+long {
		t.Errorf("content is not the full result (%d chars)", len(got))
	}
	brief, _ := res.Meta[builtin.MetaSubagentResultBrief].(string)
	sum := sha256.Sum256([]byte(long))
	if n := len([]rune(brief)); n != 2000 || !strings.HasPrefix(brief, "aaa") || !strings.HasSuffix(brief, "zzz") ||
		!strings.Contains(brief, "\n...\n") {
		t.Errorf("brief: %d chars, head %q, tail %q", n, brief[:5], brief[len(brief)-5:])
	}
	if got := res.Meta[builtin.MetaSubagentResultSHA256]; got != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 = %v", got)
	}
	if _, ok := res.Meta[builtin.MetaSubagentError]; ok {
		t.Error("completed result carries subagent_error")
	}
	if d := res.Update.Delegations[0]; len([]rune(d.Result)) > 2000 || d.Status != "completed" {
		t.Errorf("ledger entry = %d chars, status %s", len(d.Result), d.Status)
	}
}

func TestTaskResultContract(t *testing.T) {
	tests := []struct {
		name string
		in   builtin.TaskResult
		want string
	}{
		{"completed", builtin.TaskResult{Status: builtin.TaskCompleted, Result: "r"}, "Task Succeeded. Result: r"},
		{"completed capped", builtin.TaskResult{Status: builtin.TaskCompleted, Result: "r", StopReason: builtin.StopTokenCapped}, "Task Succeeded (capped: token budget). Result: r"},
		{"failed", builtin.TaskResult{Status: builtin.TaskFailed}, "Task failed."},
		{"failed error", builtin.TaskResult{Status: builtin.TaskFailed, Error: "e"}, "Task failed. Error: e"},
		{"failed capped", builtin.TaskResult{Status: builtin.TaskFailed, StopReason: builtin.StopLoopCapped}, "Task failed (capped: repeated tool-call loop)."},
		{"failed capped error", builtin.TaskResult{Status: builtin.TaskFailed, StopReason: builtin.StopTurnCapped, Error: "e"}, "Task failed (capped: turn budget). Error: e"},
		{"cancelled", builtin.TaskResult{Status: builtin.TaskCancelled}, "Task cancelled by user."},
		{"cancelled error", builtin.TaskResult{Status: builtin.TaskCancelled, Error: "e"}, "Task cancelled by user. Error: e"},
		{"timed out", builtin.TaskResult{Status: builtin.TaskTimedOut}, "Task timed out."},
		{"timed out error", builtin.TaskResult{Status: builtin.TaskTimedOut, Error: "e"}, "Task timed out. Error: e"},
		{"polling", builtin.TaskResult{Status: builtin.TaskPollingTimedOut, Error: "stuck"}, "stuck"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := builtin.TaskResultText(tc.in); got != tc.want {
				t.Errorf("text = %q, want %q", got, tc.want)
			}
			if _, err := builtin.TaskResultMeta(tc.in); err != nil {
				t.Error(err)
			}
		})
	}
	if _, err := builtin.TaskResultMeta(builtin.TaskResult{Status: "done"}); err == nil {
		t.Error("invalid status accepted")
	}
	if _, err := builtin.TaskResultMeta(builtin.TaskResult{Status: builtin.TaskFailed, StopReason: "bored"}); err == nil {
		t.Error("invalid stop reason accepted")
	}
	if got := builtin.NormalizeStopReason("max_turns_reached"); got != builtin.StopTurnCapped {
		t.Errorf("legacy stop reason = %q", got)
	}
}

func TestLimitMiddleware(t *testing.T) {
	t.Run("clamp", func(t *testing.T) {
		def := config.Default().Subagents
		big := def
		big.MaxConcurrent, big.MaxTotalPerRun = 200, 500
		tests := []struct {
			name        string
			cfg         config.Subagents
			conc, total int
			want        subagent.Limits
		}{
			{"defaults", def, 0, 0, subagent.Limits{MaxConcurrent: 3, MaxTotal: 6}},
			{"clamped high", def, 10, 99, subagent.Limits{MaxConcurrent: 4, MaxTotal: 50}},
			{"clamped low", def, -5, -1, subagent.Limits{MaxConcurrent: 1, MaxTotal: 1}},
			{"configured batch", big, 0, 0, subagent.Limits{MaxConcurrent: 200, MaxTotal: 500}},
			{"request under configured ceiling", big, 150, 1000, subagent.Limits{MaxConcurrent: 150, MaxTotal: 500}},
		}
		for _, tc := range tests {
			if got := subagent.ResolveLimits(tc.cfg, tc.conc, tc.total); got != tc.want {
				t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
			}
		}
	})

	calls := func(names ...string) []model.ToolCall {
		out := make([]model.ToolCall, len(names))
		for i, n := range names {
			out[i] = model.ToolCall{ID: n + "_" + string(rune('a'+i)), Name: n}
		}
		return out
	}
	ids := func(cs []model.ToolCall) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.ID
		}
		return out
	}
	ledger := func(run string, n int) []thread.Delegation {
		var out []thread.Delegation
		for i := range n {
			out = append(out, thread.Delegation{ID: run + string(rune('0'+i)), RunID: run, Status: "completed"})
		}
		return out
	}
	tests := []struct {
		name       string
		limits     subagent.Limits
		state      *thread.State
		calls      []model.ToolCall
		wantIDs    []string
		wantNotice bool
	}{
		{
			name: "keeps first N task calls and all others", limits: subagent.Limits{MaxConcurrent: 2, MaxTotal: 6},
			calls:   calls("task", "ls", "task", "task", "bash"),
			wantIDs: []string{"task_a", "ls_b", "task_c", "bash_e"},
		},
		{
			name: "under the limit unchanged", limits: subagent.Limits{MaxConcurrent: 3, MaxTotal: 6},
			calls: calls("task", "task"), wantIDs: []string{"task_a", "task_b"},
		},
		{
			name: "total counts only the current run", limits: subagent.Limits{MaxConcurrent: 3, MaxTotal: 6},
			state: &thread.State{Delegations: append(ledger("old", 9), ledger("run1", 4)...)},
			calls: calls("task", "task", "task"), wantIDs: []string{"task_a", "task_b"}, wantNotice: true,
		},
		{
			name: "exhausted budget appends the notice", limits: subagent.Limits{MaxConcurrent: 3, MaxTotal: 6},
			state: &thread.State{Delegations: ledger("run1", 6)},
			calls: calls("task", "task"), wantIDs: []string{}, wantNotice: true,
		},
		{
			name: "exhausted budget keeps other calls and appends the notice", limits: subagent.Limits{MaxConcurrent: 3, MaxTotal: 6},
			state: &thread.State{Delegations: ledger("run1", 6)},
			calls: calls("task", "ls"), wantIDs: []string{"ls_b"}, wantNotice: true,
		},
		{
			name: "budget reached by this response appends the notice", limits: subagent.Limits{MaxConcurrent: 3, MaxTotal: 6},
			state: &thread.State{Delegations: ledger("run1", 4)},
			calls: calls("task", "task", "task"), wantIDs: []string{"task_a", "task_b"}, wantNotice: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := &model.Response{Message: model.Message{ID: "m1", Role: model.RoleAssistant, Content: "Planning.", ToolCalls: tc.calls}}
			h := tool.ChainModel(func(context.Context, *tool.ModelCall) (*model.Response, error) { return resp, nil },
				subagent.LimitMiddleware(tc.limits))
			got, err := h(t.Context(), &tool.ModelCall{Request: &model.Request{}, State: tc.state, RunID: "run1"})
			if err != nil {
				t.Fatal(err)
			}
			if g := ids(got.Message.ToolCalls); !cmp.Equal(g, tc.wantIDs) {
				t.Errorf("kept %v, want %v", g, tc.wantIDs)
			}
			if got.Message.ID != "m1" {
				t.Errorf("message id changed to %q", got.Message.ID)
			}
			wantContent := "Planning."
			if tc.wantNotice {
				wantContent += "\n\n" + subagent.LimitNotice
				if got.Message.Meta["stop_reason"] != subagent.StopSubagentLimitCapped {
					t.Errorf("meta = %v, want stop_reason", got.Message.Meta)
				}
			}
			if got.Message.Content != wantContent {
				t.Errorf("content = %q, want %q", got.Message.Content, wantContent)
			}
		})
	}

	t.Run("per-run count survives a full ledger", func(t *testing.T) {
		// The ledger keeps 50 entries; a configured limit above that must
		// still hold.
		mw := subagent.LimitMiddleware(subagent.Limits{MaxConcurrent: 100, MaxTotal: 120})
		kept := 0
		for range 3 {
			resp := &model.Response{Message: model.Message{ToolCalls: calls(slices.Repeat([]string{"task"}, 50)...)}}
			h := tool.ChainModel(func(context.Context, *tool.ModelCall) (*model.Response, error) { return resp, nil }, mw)
			got, _ := h(t.Context(), &tool.ModelCall{Request: &model.Request{}, RunID: "r",
				State: &thread.State{Delegations: ledger("r", 50)}})
			kept += len(got.Message.ToolCalls)
		}
		if kept != 70 {
			t.Errorf("kept %d task calls over three responses, want 70 (120 - 50 already in the ledger)", kept)
		}
	})

	t.Run("hook reads the run's total from the context", func(t *testing.T) {
		mw := subagent.LimitHook(config.Default())(3)
		resp := &model.Response{Message: model.Message{ToolCalls: calls("task", "task", "task")}}
		h := tool.ChainModel(func(context.Context, *tool.ModelCall) (*model.Response, error) { return resp, nil }, mw)
		got, _ := h(t.Context(), &tool.ModelCall{Request: &model.Request{}, RunID: "r",
			Context: map[string]any{subagent.ContextMaxTotalSubagents: 1}})
		if n := len(got.Message.ToolCalls); n != 1 {
			t.Errorf("kept %d, want 1", n)
		}
	})
}
