package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// titleRouted sends title requests to title and every other request to
// lead.
type titleRouted struct{ lead, title *modeltest.Model }

func (m titleRouted) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	if strings.HasPrefix(modeltest.LastMessage(req).Content, "Generate a concise title") {
		return m.title.Generate(ctx, req)
	}
	return m.lead.Generate(ctx, req)
}

// subagents completes every task at once with a fixed usage.
type subagents struct{}

func (subagents) ResolveTask(subagentType, parentModel string) (builtin.TaskType, error) {
	return builtin.TaskType{Name: subagentType, ModelName: "sub-model"}, nil
}

func (subagents) Delegate(context.Context, builtin.TaskRequest, func(builtin.TaskProgress)) (builtin.TaskResult, error) {
	return builtin.TaskResult{Status: builtin.TaskCompleted, Result: "42", ModelName: "sub-model",
		Usage: &model.Usage{InputTokens: 40, OutputTokens: 10, TotalTokens: 50}}, nil
}

type modelEntry struct {
	Tokens int64 `json:"tokens"`
	Runs   int   `json:"runs"`
}

type tokenUsage struct {
	ThreadID          string                `json:"thread_id"`
	TotalTokens       int64                 `json:"total_tokens"`
	TotalInputTokens  int64                 `json:"total_input_tokens"`
	TotalOutputTokens int64                 `json:"total_output_tokens"`
	TotalRuns         int                   `json:"total_runs"`
	ByModel           map[string]modelEntry `json:"by_model"`
	ByCaller          map[string]int64      `json:"by_caller"`
	ContextUsage      *struct {
		TokenCount       int      `json:"token_count"`
		MaxContextTokens *int     `json:"max_context_tokens"`
		Percentage       *float64 `json:"percentage"`
	} `json:"context_usage"`
}

// TestTokenUsage: after a streamed run that delegates a subagent task and
// titles the thread, GET token-usage sums the run by caller (the loop's
// calls, the task, the title call) and by model, with the context usage of
// the thread's messages against test-model's context_window; another
// user's thread and an unknown one are 404; /api/models turns the usage
// display on.
func TestTokenUsage(t *testing.T) {
	args, _ := json.Marshal(map[string]string{"description": "look", "prompt": "look it up", "subagent_type": "general-purpose"})
	chat := titleRouted{
		lead: modeltest.New(
			modeltest.Turn{ToolCalls: []model.ToolCall{{Name: builtin.TaskName, Arguments: args}},
				Usage: &model.Usage{InputTokens: 100, OutputTokens: 20, TotalTokens: 120}},
			modeltest.Turn{Text: "Found it.", Usage: &model.Usage{InputTokens: 30, OutputTokens: 5, TotalTokens: 35}},
		),
		title: modeltest.New(modeltest.Turn{Text: "Looking it up", Usage: &model.Usage{InputTokens: 7, OutputTokens: 3, TotalTokens: 10}}),
	}
	e := newEnv(t, envOptions{model: chat, tokens: tokens(), task: subagents{},
		config: "title:\n  model_name: test-model\n"})

	var models struct {
		TokenUsage map[string]any `json:"token_usage"`
	}
	e.json("GET", "/api/models", aliceToken, nil, 200, &models)
	if models.TokenUsage["enabled"] != true {
		t.Errorf("/api/models token_usage = %v, want enabled", models.TokenUsage)
	}

	tid := uuid.NewString()
	body := runBody(tid, humanInput("look it up", nil))
	body["context"].(map[string]any)["subagent_enabled"] = true
	resp := e.startStream(tid, aliceToken, body)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	var got tokenUsage
	e.json("GET", "/api/threads/"+tid+"/token-usage", aliceToken, nil, 200, &got)
	if got.ContextUsage == nil || got.ContextUsage.MaxContextTokens == nil || got.ContextUsage.Percentage == nil {
		t.Fatalf("context_usage = %+v, want a count against test-model's window", got.ContextUsage)
	}
	cp, err := e.store.LatestCheckpoint(t.Context(), tid)
	if err != nil {
		t.Fatal(err)
	}
	count := agent.ApproxTokens(cp.State.Messages)
	if c := got.ContextUsage; c.TokenCount != count || *c.MaxContextTokens != 100000 ||
		*c.Percentage != math.Round(float64(count)/100000*1000)/10 {
		t.Errorf("context_usage = {%d %d %v}, want {%d 100000 ...}", c.TokenCount, *c.MaxContextTokens, *c.Percentage, count)
	}
	got.ContextUsage = nil
	// test-model answered the loop (155) and the title (10).
	want := tokenUsage{ThreadID: tid, TotalTokens: 215, TotalInputTokens: 177, TotalOutputTokens: 38, TotalRuns: 1,
		ByModel:  map[string]modelEntry{"test-model": {Tokens: 165, Runs: 1}, "sub-model": {Tokens: 50, Runs: 1}},
		ByCaller: map[string]int64{"lead_agent": 155, "subagent": 50, "middleware": 10}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("token-usage (-want +got):\n%s", diff)
	}

	// Another user's thread is hidden like a missing one.
	for _, tc := range []struct{ name, path, token string }{
		{"another user's thread", "/api/threads/" + tid + "/token-usage", bobToken},
		{"unknown thread", "/api/threads/" + uuid.NewString() + "/token-usage", aliceToken},
		{"through the langgraph prefix", "/api/langgraph/threads/" + tid + "/token-usage", bobToken},
	} {
		if code := e.status("GET", tc.path, tc.token, nil); code != 404 {
			t.Errorf("%s: GET token-usage = %d, want 404", tc.name, code)
		}
	}
}

// TestTokenUsageOff: token_usage.enabled false turns the display off; the
// route still answers (as DeerFlow's does), with nothing for a thread
// without runs.
func TestTokenUsageOff(t *testing.T) {
	e := newEnv(t, envOptions{config: "token_usage:\n  enabled: false\n"})
	var models struct {
		TokenUsage map[string]any `json:"token_usage"`
	}
	e.json("GET", "/api/models", "", nil, 200, &models)
	if models.TokenUsage["enabled"] != false {
		t.Errorf("/api/models token_usage = %v, want disabled", models.TokenUsage)
	}
	tid := uuid.NewString()
	e.json("POST", "/api/threads", "", map[string]any{"thread_id": tid}, 200, nil)
	var got map[string]any
	e.json("GET", "/api/threads/"+tid+"/token-usage", "", nil, 200, &got)
	want := map[string]any{"thread_id": tid, "total_tokens": 0.0, "total_input_tokens": 0.0, "total_output_tokens": 0.0,
		"total_runs": 0.0, "by_model": map[string]any{},
		"by_caller":     map[string]any{"lead_agent": 0.0, "subagent": 0.0, "middleware": 0.0},
		"context_usage": map[string]any{"token_count": 0.0, "max_context_tokens": 100000.0, "percentage": 0.0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("token-usage of a thread without runs (-want +got):\n%s", diff)
	}
}
