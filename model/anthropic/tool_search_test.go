package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
)

// TestToolSearch_requestAndServerBlocks checks the Anthropic request
// shape of the provider's own tool search: deferred tools carry
// defer_loading, the regex or BM25 search tool is appended; a streamed
// server_tool_use and tool_search_tool_result are not tool calls, are
// kept on the message with the referenced names, and go back in the
// next request as the API sent them.
func TestToolSearch_requestAndServerBlocks(t *testing.T) {
	f := &fake{status: 200, body: sse(messageStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"tool_search_tool_bm25","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"weather\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_search_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"wx_forecast"}]}}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"wx_forecast","input":{}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Oslo\"}"}}`,
		`{"type":"content_block_stop","index":2}`,
		stopWith("tool_use", 9), messageStop)}
	m := newModel(t, start(t, f), nil)
	if !m.SupportsToolSearch() {
		t.Fatal("the Anthropic model does not say it searches tools")
	}
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)
	req := &model.Request{Messages: []model.Message{model.UserText("weather in Oslo?")}, ProviderToolSearch: model.ToolSearchBM25,
		Tools: []model.ToolDefinition{{Name: "ls", Description: "List.", InputSchema: schema},
			{Name: "wx_forecast", Description: "Forecast.", InputSchema: schema, DeferLoading: true}}}
	evs, err := run(t.Context(), m, req)
	if err != nil {
		t.Fatal(err)
	}
	resp := evs[len(evs)-1].Response
	var calls []string
	for _, c := range resp.Message.ToolCalls {
		calls = append(calls, c.Name+string(c.Arguments))
	}
	if diff := cmp.Diff([]string{`wx_forecast{"city":"Oslo"}`}, calls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"wx_forecast"}, model.ToolReferences(resp.Message)); diff != "" {
		t.Errorf("tool references (-want +got):\n%s", diff)
	}
	var body map[string]any
	if err := json.Unmarshal(f.bodies[0], &body); err != nil {
		t.Fatal(err)
	}
	wantTools := `[
	  {"name": "ls", "description": "List.", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
	  {"name": "wx_forecast", "description": "Forecast.", "defer_loading": true, "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
	  {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
	]`
	var want any
	if err := json.Unmarshal([]byte(wantTools), &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, body["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	// The message as the store keeps it (JSON), then the next request.
	stored, err := json.Marshal(resp.Message)
	if err != nil {
		t.Fatal(err)
	}
	var back model.Message
	if err := json.Unmarshal(stored, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"wx_forecast"}, model.ToolReferences(back)); diff != "" {
		t.Errorf("tool references after storage (-want +got):\n%s", diff)
	}
	req.Messages = append(req.Messages, back, model.Message{Role: model.RoleTool, ToolCallID: "toolu_1", Content: "rain"})
	if _, err := run(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(f.bodies[1], &body); err != nil {
		t.Fatal(err)
	}
	wantAssistant := `{"role": "assistant", "content": [
	  {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": "weather"}},
	  {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {"type": "tool_search_tool_search_result",
	    "tool_references": [{"type": "tool_reference", "tool_name": "wx_forecast"}]}},
	  {"type": "tool_use", "id": "toolu_1", "name": "wx_forecast", "input": {"city": "Oslo"}}
	]}`
	if err := json.Unmarshal([]byte(wantAssistant), &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, body["messages"].([]any)[1]); diff != "" {
		t.Errorf("assistant message sent back (-want +got):\n%s", diff)
	}

	req.ProviderToolSearch = "fuzzy"
	if _, err := run(t.Context(), m, req); err == nil {
		t.Error("an unknown tool search variant was sent")
	}
}
