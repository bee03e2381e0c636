package subagent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// TestSubagentSummarizes: a subagent run summarises its own history as the
// lead does (DeerFlow's subagent chain), with summarization.model_name.
func TestSubagentSummarizes(t *testing.T) {
	ls := modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "ls", Arguments: json.RawMessage(`{}`)}}}
	worker := modeltest.New(ls, ls, modeltest.Turn{Text: "done"})
	summary := modeltest.New(modeltest.Turn{Text: "listed twice"})
	h := newHarness(t, baseConfig+"summarization:\n  enabled: true\n  model_name: lead\n"+
		"  trigger: {type: messages, value: 5}\n  keep: {type: messages, value: 2}\n",
		map[string]model.ChatModel{"worker": worker, "lead": summary}, nil)
	var rec recorder
	res, err := h.callTask(t.Context(), &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.TextContent(); !strings.Contains(got, "done") {
		t.Errorf("result = %q", got)
	}
	if summary.Calls() != 1 {
		t.Fatalf("summary model calls = %d, want 1", summary.Calls())
	}
	req := worker.LastRequest()
	found := false
	for _, m := range req.Messages {
		found = found || strings.Contains(m.Content, "## Conversation summary so far\nlisted twice")
	}
	if !found {
		t.Errorf("the last worker request has no summary: %+v", req.Messages)
	}
}
