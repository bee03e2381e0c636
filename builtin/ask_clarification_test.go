package builtin

import (
	"encoding/json"
	"strings"
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
	res, err := tl.Handler(t.Context(), &tool.Call{}, json.RawMessage(`{"question":"Which?","clarification_type":"missing_info"}`))
	if err != nil || res.IsError {
		t.Fatalf("placeholder handler: %v %+v", err, res)
	}
}

// Without the middleware (antler tools call) the handler validates its
// arguments like any typed tool; the middleware itself stays lenient.
func TestAskClarificationHandlerValidates(t *testing.T) {
	for _, args := range []string{`{}`, `{"question":1,"clarification_type":"missing_info"}`, `[1]`, `not json`} {
		res, err := AskClarification().Handler(t.Context(), &tool.Call{}, json.RawMessage(args))
		if err != nil || !res.IsError || !strings.HasPrefix(res.TextContent(), "Error: invalid arguments for ask_clarification") {
			t.Errorf("%s: got %v, %q; want an invalid-arguments error result", args, err, res.TextContent())
		}
	}
}
