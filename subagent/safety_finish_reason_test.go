package subagent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// A subagent's response the provider cut for safety loses its tool calls,
// as the lead's does: the call never runs, and the task's result is the
// explanation. With safety_finish_reason disabled the call runs.
func TestSubagentSafetyFinishReason(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		requests   int
		result     string
	}{
		{"on by default", baseConfig, 1, "Task Succeeded. Result: checking\n\nThe model provider stopped this response with a safety-related signal"},
		{"enabled: false", baseConfig + "safety_finish_reason:\n  enabled: false\n", 2, "Task Succeeded. Result: done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := modeltest.New(
				modeltest.Turn{Text: "checking", ToolCalls: []model.ToolCall{{Name: "ls", Arguments: json.RawMessage(`{"path":"/"}`)}},
					FinishReason: "content_filter"},
				modeltest.Turn{Text: "done"})
			h := newHarness(t, tc.yaml, map[string]model.ChatModel{"worker": m}, nil)
			var rec recorder
			res, err := h.callTask(t.Context(), &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.TextContent(); !strings.HasPrefix(got, tc.result) {
				t.Errorf("content = %q", got)
			}
			if n := len(m.Requests()); n != tc.requests {
				t.Errorf("%d model requests, want %d", n, tc.requests)
			}
		})
	}
}
