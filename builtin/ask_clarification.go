package builtin

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/antlerhq/antler/tool"
)

// AskClarificationName is the name of the clarification tool; the agent's
// clarification middleware intercepts calls by this name.
const AskClarificationName = "ask_clarification"

//go:embed ask_clarification.md
var askClarificationDescription string

// askClarificationSchema is DeerFlow's argument schema: question and
// clarification_type are required; context, options and fields optional.
const askClarificationSchema = `{
  "type": "object",
  "properties": {
    "question": {"type": "string", "description": "The question to ask the user. Be specific."},
    "clarification_type": {
      "type": "string",
      "enum": ["missing_info", "ambiguous_requirement", "approach_choice", "risk_confirmation", "suggestion"],
      "description": "Why you are asking: missing_info, ambiguous_requirement, approach_choice, risk_confirmation or suggestion."
    },
    "context": {"type": "string", "description": "Optional background explaining why you need the answer."},
    "options": {
      "type": "array", "items": {"type": "string"},
      "description": "Optional choices for the user to pick one from (approach_choice, suggestion)."
    },
    "fields": {
      "type": "array",
      "description": "Optional form fields to collect several values in one step; takes precedence over options.",
      "items": {
        "type": "object",
        "properties": {
          "name": {"type": "string", "description": "Unique field identifier (not a JavaScript prototype name such as constructor or toString)."},
          "label": {"type": "string", "description": "Text shown to the user; defaults to the name."},
          "type": {"type": "string", "enum": ["text", "textarea", "number", "select", "multi_select", "checkbox", "date"], "description": "Input type; defaults to text."},
          "required": {"type": "boolean", "description": "Whether the user must fill the field; a required checkbox means the user must tick it."},
          "options": {"type": "array", "items": {"type": "string"}, "description": "Choices, required for select and multi_select."},
          "placeholder": {"type": "string", "description": "Optional hint text."}
        },
        "required": ["name"]
      }
    }
  },
  "required": ["question", "clarification_type"]
}`

// AskClarification returns the ask_clarification tool. It is return-direct
// and its handler is a placeholder: the agent's clarification middleware
// intercepts every call by name, turns it into the question shown to the
// user and ends the run (agent.Clarification).
//
// The middleware does not enforce the schema: it normalises whatever the
// model sends (options as a JSON string, fields in odd shapes) rather
// than rejecting it, as DeerFlow does. The handler, reached only without
// the middleware (antler tools call, an embedding program), validates
// like any typed tool, as a LangChain tool invoked directly would.
func AskClarification() *tool.Tool {
	t, err := tool.NewWithSchema(AskClarificationName, askClarificationDescription, json.RawMessage(askClarificationSchema),
		func(context.Context, *tool.Call, map[string]any) (string, error) {
			return "Clarification request processed by middleware", nil
		})
	if err != nil {
		panic("builtin.AskClarification: " + err.Error()) // constant schema: a programming error
	}
	t.ReturnDirect = true
	return t
}
