package deferred_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/tool"
)

// End to end through the agent loop with a scripted model: the first
// request carries only tool_search's schema (the prompt lists the
// deferred names); a call to a deferred tool before the search gets the
// "not promoted" error and does not run; tool_search promotes it; the
// next request carries its schema and the call runs. A second run on the
// same thread state still has it promoted.
func TestEndToEndScriptedModel(t *testing.T) {
	var ran atomic.Int32
	weather := &tool.Tool{
		Name:        "weather_forecast",
		Description: "Get the weather forecast for a city.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`),
		Meta:        map[string]string{"mcp_server": "weather"},
		Handler: func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			ran.Add(1)
			return tool.Text("sunny"), nil
		},
	}
	other := &tool.Tool{Name: "slack_post", Description: "Post to Slack.", Meta: map[string]string{"mcp_server": "slack"},
		Handler: func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) { return tool.Text("ok"), nil }}
	d, err := deferred.Setup([]*tool.Tool{weather, other}, config.ToolSearch{Enabled: true, MaxResults: 5})
	if err != nil {
		t.Fatal(err)
	}

	var seen [][]string
	record := func(req *model.Request) {
		seen = append(seen, modeltest.ToolNames(req))
	}
	call := func(name, args string) modeltest.Turn {
		return modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			record(req)
			return modeltest.Turn{ToolCalls: []model.ToolCall{{Name: name, Arguments: json.RawMessage(args)}}}
		}}
	}
	final := modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
		record(req)
		return modeltest.Turn{Text: "done"}
	}}
	m := modeltest.New(
		call("weather_forecast", `{"city":"Paris"}`),
		call(deferred.ToolSearchName, `{"query":"weather forecast city"}`),
		call("weather_forecast", `{"city":"Paris"}`),
		final,
		// second run
		call("weather_forecast", `{"city":"Oslo"}`),
		final,
	)
	a, err := agent.New(agent.Options{
		Model:            m,
		Tools:            []*tool.Tool{d.ToolSearch, weather, other},
		ToolMiddlewares:  []tool.Middleware{d.GuardTools},
		ModelMiddlewares: []tool.ModelMiddleware{d.FilterModel},
		SystemPrompt:     d.Prompt,
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t1", UserID: "u", Messages: []model.Message{model.UserText("weather in Paris?")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen[0], []string{deferred.ToolSearchName}) {
		t.Errorf("first request tools = %v, want only tool_search", seen[0])
	}
	if !strings.Contains(m.Requests()[0].Messages[0].Content, "<available-deferred-tools>\nslack_post\nweather_forecast\n</available-deferred-tools>") {
		t.Errorf("system prompt lacks the deferred names: %q", m.Requests()[0].Messages[0].Content)
	}
	var toolTexts []string
	for _, msg := range out.State.Messages {
		if msg.Role == model.RoleTool {
			toolTexts = append(toolTexts, msg.Content)
		}
	}
	if len(toolTexts) != 3 || !strings.Contains(toolTexts[0], "is deferred and has not been promoted yet") ||
		!strings.Contains(toolTexts[1], `"name": "weather_forecast"`) || toolTexts[2] != "sunny" {
		t.Errorf("tool results = %q", toolTexts)
	}
	if !slices.Contains(seen[2], "weather_forecast") || slices.Contains(seen[2], "slack_post") {
		t.Errorf("request after tool_search tools = %v", seen[2])
	}
	if ran.Load() != 1 {
		t.Errorf("weather_forecast ran %d times, want 1", ran.Load())
	}

	// Turn two of the same thread: the promotion is in the state.
	out2, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t1", UserID: "u", State: out.State, Messages: []model.Message{model.UserText("and Oslo?")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(seen[4], "weather_forecast") || ran.Load() != 2 {
		t.Errorf("second run: tools %v, runs %d", seen[4], ran.Load())
	}
	_ = out2
}

// TestEndToEndSearchesInOneTurn checks what tool_search's description
// offers: one search per step, as separate calls in one turn. Both
// calls' promotions reach the next request.
func TestEndToEndSearchesInOneTurn(t *testing.T) {
	mk := func(server, name, desc string) *tool.Tool {
		return &tool.Tool{Name: name, Description: desc, Meta: map[string]string{"mcp_server": server},
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
			Handler: func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
				return tool.Text("ok"), nil
			}}
	}
	sheet := mk("excel", "excel_read_sheet", "Read the cells of a spreadsheet.")
	chart := mk("charts", "charts_bar_chart", "Draw a bar chart of values.")
	mail := mk("mail", "mail_send", "Send an email.")
	d, err := deferred.Setup([]*tool.Tool{sheet, chart, mail}, config.ToolSearch{Enabled: true, MaxResults: 1})
	if err != nil {
		t.Fatal(err)
	}
	var seen [][]string
	m := modeltest.New(
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			seen = append(seen, modeltest.ToolNames(req))
			return modeltest.Turn{ToolCalls: []model.ToolCall{
				{ID: "c1", Name: deferred.ToolSearchName, Arguments: json.RawMessage(`{"query":"read spreadsheet"}`)},
				{ID: "c2", Name: deferred.ToolSearchName, Arguments: json.RawMessage(`{"query":"bar chart"}`)},
			}}
		}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			seen = append(seen, modeltest.ToolNames(req))
			return modeltest.Turn{Text: "done"}
		}},
	)
	a, err := agent.New(agent.Options{
		Model:            m,
		Tools:            []*tool.Tool{d.ToolSearch, sheet, chart, mail},
		ToolMiddlewares:  []tool.Middleware{d.GuardTools},
		ModelMiddlewares: []tool.ModelMiddleware{d.FilterModel},
		SystemPrompt:     d.Prompt,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t1", UserID: "u", Messages: []model.Message{model.UserText("chart my sheet")}}, nil); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Fatalf("%d model requests, want 2", len(seen))
	}
	got := slices.Sorted(slices.Values(seen[1]))
	want := []string{"charts_bar_chart", "excel_read_sheet", deferred.ToolSearchName}
	if !slices.Equal(got, want) {
		t.Errorf("tools after two searches in one turn = %v, want %v", got, want)
	}
}
