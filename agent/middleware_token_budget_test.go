package agent_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// budgetStep is one model call through a token budget: the usage the
// response reports and whether it calls a tool.
type budgetStep struct {
	in, out  int64
	toolCall bool
}

// budgetCalls sends steps through b in one run and returns the requests
// the model saw and the responses the middleware returned.
func budgetCalls(t *testing.T, b *agent.TokenBudget, runID string, steps ...budgetStep) ([]*model.Request, []*model.Response) {
	t.Helper()
	var reqs []*model.Request
	var resps []*model.Response
	for _, s := range steps {
		h := b.Middleware()(func(_ context.Context, call *tool.ModelCall) (*model.Response, error) {
			reqs = append(reqs, call.Request)
			r := &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "Thinking"},
				Usage: model.Usage{InputTokens: s.in, OutputTokens: s.out, TotalTokens: s.in + s.out}, FinishReason: model.FinishStop}
			if s.toolCall {
				r.Message.ToolCalls = []model.ToolCall{{ID: "c1", Name: "ls"}}
				r.FinishReason = model.FinishToolCalls
			}
			return r, nil
		})
		req := &model.Request{Messages: []model.Message{model.UserText("task")}}
		resp, err := h(t.Context(), &tool.ModelCall{Request: req, RunID: runID})
		if err != nil {
			t.Fatal(err)
		}
		resps = append(resps, resp)
	}
	return reqs, resps
}

// warnings returns the budget_warning messages of a request.
func warnings(req *model.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Name == agent.TokenBudgetWarningName {
			out = append(out, m.Content)
		}
	}
	return out
}

func budgetConfig(maxTokens, maxIn, maxOut int) config.TokenBudget {
	return config.TokenBudget{Enabled: true, MaxTokens: maxTokens, MaxInputTokens: maxIn, MaxOutputTokens: maxOut,
		WarnThreshold: 0.8, HardStopThreshold: 1.0}
}

// DeerFlow's token budget cases: the warning comes once, in the request
// after the one that crossed the threshold; the hard stop strips the tool
// calls and appends the exceeded text; input and output limits count on
// their own.
func TestTokenBudget_warnsThenStops(t *testing.T) {
	const warnTotal = "[TOKEN BUDGET WARNING] You have used 8,500 of your 10,000 total token budget (85%). Wrap up your current work and produce a final answer. Avoid starting new tool calls unless absolutely necessary."
	for _, tc := range []struct {
		name         string
		cfg          config.TokenBudget
		steps        []budgetStep
		wantWarnings [][]string // per request
		wantText     string     // of the last response
		wantCalls    int        // tool calls of the last response
		wantCapped   bool
	}{
		{name: "no usage changes nothing", cfg: budgetConfig(10000, 0, 0),
			steps:        []budgetStep{{0, 0, true}, {0, 0, true}},
			wantWarnings: [][]string{nil, nil}, wantText: "Thinking", wantCalls: 1},
		{name: "below the warning changes nothing", cfg: budgetConfig(10000, 0, 0),
			steps:        []budgetStep{{5000, 1000, true}, {100, 100, true}},
			wantWarnings: [][]string{nil, nil}, wantText: "Thinking", wantCalls: 1},
		{name: "the warning reaches the next request only", cfg: budgetConfig(10000, 0, 0),
			steps:        []budgetStep{{8000, 500, true}, {100, 100, true}, {100, 100, true}},
			wantWarnings: [][]string{nil, {warnTotal}, nil}, wantText: "Thinking", wantCalls: 1},
		{name: "the warning comes once per run", cfg: budgetConfig(10000, 0, 0),
			steps:        []budgetStep{{8000, 500, true}, {200, 0, true}, {100, 0, true}},
			wantWarnings: [][]string{nil, {warnTotal}, nil}, wantText: "Thinking", wantCalls: 1},
		{name: "the hard stop strips the tool calls and appends the exceeded text", cfg: budgetConfig(10000, 0, 0),
			steps:        []budgetStep{{9000, 1500, true}},
			wantWarnings: [][]string{nil},
			wantText:     "Thinking\n\n[TOKEN BUDGET EXCEEDED] The total token usage (10,500) has exceeded the safety limit (10,000). Producing final answer with results collected so far.",
			wantCapped:   true},
		{name: "the input limit warns", cfg: budgetConfig(100000, 5000, 0),
			steps:        []budgetStep{{4500, 100, true}, {0, 10, false}},
			wantWarnings: [][]string{nil, {"[TOKEN BUDGET WARNING] You have used 4,500 of your 5,000 input token budget (90%). Wrap up your current work and produce a final answer. Avoid starting new tool calls unless absolutely necessary."}},
			wantText:     "Thinking"},
		{name: "the output limit stops", cfg: budgetConfig(100000, 0, 1000),
			steps:        []budgetStep{{100, 1200, true}},
			wantWarnings: [][]string{nil},
			wantText:     "Thinking\n\n[TOKEN BUDGET EXCEEDED] The output token usage (1,200) has exceeded the safety limit (1,000). Producing final answer with results collected so far.",
			wantCapped:   true},
		{name: "a disabled budget changes nothing", cfg: config.TokenBudget{MaxTokens: 1000, WarnThreshold: 0.8, HardStopThreshold: 1},
			steps:        []budgetStep{{900, 0, true}, {900, 0, true}},
			wantWarnings: [][]string{nil, nil}, wantText: "Thinking", wantCalls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := agent.NewTokenBudget(tc.cfg)
			reqs, resps := budgetCalls(t, b, "run-1", tc.steps...)
			var got [][]string
			for _, r := range reqs {
				got = append(got, warnings(r))
			}
			if diff := cmp.Diff(tc.wantWarnings, got); diff != "" {
				t.Errorf("warnings per request (-want +got):\n%s", diff)
			}
			last := resps[len(resps)-1]
			if last.Message.Content != tc.wantText || len(last.Message.ToolCalls) != tc.wantCalls {
				t.Errorf("last response = %q with %d calls, want %q with %d", last.Message.Content,
					len(last.Message.ToolCalls), tc.wantText, tc.wantCalls)
			}
			if b.Capped() != tc.wantCapped {
				t.Errorf("Capped() = %v, want %v", b.Capped(), tc.wantCapped)
			}
			stop, _ := last.Message.Meta["stop_reason"].(string)
			if capped := stop == string(agent.StopTokenCapped); capped != tc.wantCapped {
				t.Errorf("stop_reason = %q, want token_capped %v", stop, tc.wantCapped)
			}
			if tc.wantCapped && last.FinishReason != model.FinishStop {
				t.Errorf("finish reason = %q, want stop", last.FinishReason)
			}
		})
	}
}

// The warning never changes the state: the request the model sees gains
// the message, the caller's request does not.
func TestTokenBudget_warningLeavesTheCallersRequest(t *testing.T) {
	b := agent.NewTokenBudget(budgetConfig(1000, 0, 0))
	budgetCalls(t, b, "r", budgetStep{900, 0, true})
	req := &model.Request{Messages: []model.Message{model.UserText("task")}}
	var sent *model.Request
	h := b.Middleware()(func(_ context.Context, call *tool.ModelCall) (*model.Response, error) {
		sent = call.Request
		return &model.Response{}, nil
	})
	if _, err := h(t.Context(), &tool.ModelCall{Request: req, RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 1 || len(sent.Messages) != 2 || sent.Messages[1].Role != model.RoleUser {
		t.Errorf("caller's request %d messages, sent %+v", len(req.Messages), sent.Messages)
	}
}

// A new run starts a new count: usage of an earlier run never counts.
func TestTokenBudget_countsThisRunOnly(t *testing.T) {
	b := agent.NewTokenBudget(budgetConfig(1000, 0, 0))
	budgetCalls(t, b, "first", budgetStep{700, 0, true})
	_, resps := budgetCalls(t, b, "second", budgetStep{700, 0, true}, budgetStep{100, 0, true})
	if b.Capped() || len(resps[1].Message.ToolCalls) != 1 {
		t.Errorf("the second run was capped by the first run's usage: %+v", resps[1].Message)
	}
}
