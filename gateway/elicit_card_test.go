package gateway

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestElicitCard_result: the frontend's answers read back into MCP
// results, and the answers that fit no card are errors saying what is
// expected.
func TestElicitCard_result(t *testing.T) {
	form := &mcp.ElicitParams{Message: "Pick", RequestedSchema: map[string]any{
		"type": "object", "required": []any{"tags"},
		"properties": map[string]any{
			"tags": map[string]any{"type": "array", "minItems": 1, "maxItems": 2,
				"items": map[string]any{"type": "string", "enum": []any{"a", "b", "c"}}},
			"note":        map[string]any{"type": "string", "maxLength": 5},
			"constructor": map[string]any{"type": "number"},
		}}}
	one := &mcp.ElicitParams{Message: "Name?", RequestedSchema: map[string]any{
		"type": "object", "required": []any{"name"}, "properties": map[string]any{"name": map[string]any{"type": "string"}}}}
	url := &mcp.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://x.example/a"}
	tests := []struct {
		name                  string
		params                *mcp.ElicitParams
		kind, optionID, value string
		want                  *mcp.ElicitResult
		wantErr               string
	}{
		{"a form's record, a list and a renamed field", form, "text", "",
			`Tags: a, c [values: {"tags":["a","c"],"field_2":"2.5"}]`,
			&mcp.ElicitResult{Action: "accept", Content: map[string]any{"tags": []any{"a", "c"}, "constructor": 2.5}}, ""},
		{"too many choices", form, "text", "", `x [values: {"tags":["a","b","c"]}]`, nil, `"tags": at most 2 choices`},
		{"an unknown option", form, "text", "", `x [values: {"tags":["z"]}]`, nil, `"tags": answer one of the options`},
		{"a required field left out", form, "text", "", `x [values: {"note":"hi"}]`, nil, `"tags" is required`},
		{"a string too long", form, "text", "", `x [values: {"tags":["a"],"note":"toolong"}]`, nil, `"note": at most 5 characters`},
		{"a broken record", form, "text", "", `x [values: {"tags":]`, nil, "not a JSON object"},
		{"plain text for a form of several fields", form, "text", "", "a", nil, "fill in the form"},
		{"plain text for a form of one field", one, "text", "", "Ada", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, ""},
		{"decline typed", one, "text", "", " Decline. ", &mcp.ElicitResult{Action: "decline"}, ""},
		{"cancel typed", form, "text", "", "cancelled", &mcp.ElicitResult{Action: "cancel"}, ""},
		{"a url accepted by its option", url, "option", "accept", "accept", &mcp.ElicitResult{Action: "accept"}, ""},
		{"a url answered done", url, "text", "", "done", &mcp.ElicitResult{Action: "accept"}, ""},
		{"a url answered something else", url, "text", "", "maybe", nil, "answer accept, decline or cancel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := newElicitCard("mcp_elicitation:1", "srv", "call_1", tt.params)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.result(tt.kind, tt.optionID, tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestElicitCard_refusesWhatItCannotShow: a schema outside the MCP
// specification's flat primitives is an error (the request is then
// declined), and long texts are cut.
func TestElicitCard_refusesWhatItCannotShow(t *testing.T) {
	_, err := newElicitCard("id", "srv", "", &mcp.ElicitParams{Message: "x", RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{"deep": map[string]any{"type": "object"}}}})
	if err == nil || !strings.Contains(err.Error(), `property "deep"`) {
		t.Errorf("nested schema: error %v", err)
	}
	c, err := newElicitCard("id", "srv", "", &mcp.ElicitParams{Message: strings.Repeat("é", 5000)})
	if err != nil {
		t.Fatal(err)
	}
	q := c.msg.Artifact.(map[string]any)["human_input"].(map[string]any)["question"].(string)
	if n := len([]rune(q)); n != maxElicitMessage+1 || !strings.HasSuffix(q, "…") {
		t.Errorf("question of %d characters, want %d and a cut mark", n, maxElicitMessage+1)
	}
}

// TestElicitCard_fieldsTheFrontendAccepts: a property without a name
// gets a name and a label, and an enum whose values the frontend cannot
// show (only empty ones) becomes a text field, so that the frontend's
// parser never refuses the whole card.
func TestElicitCard_fieldsTheFrontendAccepts(t *testing.T) {
	c, err := newElicitCard("id", "srv", "", &mcp.ElicitParams{Message: "x", RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{
			"":     map[string]any{"type": "string"},
			"pick": map[string]any{"type": "string", "enum": []any{""}},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	got := c.msg.Artifact.(map[string]any)["human_input"].(map[string]any)["fields"]
	want := []any{
		map[string]any{"name": "field_1", "label": "field_1", "type": "text", "required": false},
		map[string]any{"name": "pick", "label": "pick", "type": "text", "required": false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}
