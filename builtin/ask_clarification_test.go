package builtin

import (
	"encoding/json"
	"testing"

	"github.com/antlerhq/antler/tool"
)

func TestAskClarificationSchema(t *testing.T) {
	tl := AskClarification()
	if tl.Name != "ask_clarification" || !tl.ReturnDirect {
		t.Fatalf("got name %q return_direct %v", tl.Name, tl.ReturnDirect)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(tl.InputSchema, &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	for _, k := range []string{"question", "clarification_type", "context", "options", "fields"} {
		if _, ok := schema.Properties[k]; !ok {
			t.Errorf("schema lacks %q", k)
		}
	}
	if _, err := tool.NewValidator(tl.InputSchema); err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	res, err := tl.Handler(t.Context(), &tool.Call{}, json.RawMessage(`{}`))
	if err != nil || res.IsError {
		t.Fatalf("placeholder handler: %v %+v", err, res)
	}
}
