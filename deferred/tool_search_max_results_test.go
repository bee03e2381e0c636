package deferred

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// TestToolSearchMaxResultsArgument checks the per-call max_results
// argument: it narrows a ranked search, never widens it past the
// configured maximum (a value out of range or not an integer is refused
// with an error that names it and the bound, never clamped), and leaves
// select: uncapped.
func TestToolSearchMaxResultsArgument(t *testing.T) {
	c := NewCatalog(sampleTools())
	ts := NewToolSearch(c, 4)
	tests := []struct {
		name      string
		args      string
		wantCount int    // promoted names
		wantError string // prefix of an error result, "" for none
	}{
		{name: "absent uses the configured maximum", args: `{"query":"a"}`, wantCount: 4},
		{name: "fewer than the maximum", args: `{"query":"a","max_results":2}`, wantCount: 2},
		{name: "equal to the maximum", args: `{"query":"a","max_results":4}`, wantCount: 4},
		{name: "an integral number counts as its integer", args: `{"query":"a","max_results":2.0}`, wantCount: 2},
		{name: "over the maximum is refused", args: `{"query":"a","max_results":5}`, wantError: "Error: invalid arguments for tool_search: /max_results: maximum"},
		{name: "far over the maximum is refused", args: `{"query":"a","max_results":1e100}`, wantError: "Error: invalid arguments for tool_search: /max_results: maximum"},
		{name: "zero is refused", args: `{"query":"a","max_results":0}`, wantError: "Error: invalid arguments for tool_search: /max_results: minimum"},
		{name: "negative is refused", args: `{"query":"a","max_results":-1}`, wantError: "Error: invalid arguments for tool_search: /max_results: minimum"},
		{name: "a fraction is refused", args: `{"query":"a","max_results":2.5}`, wantError: "Error: invalid arguments for tool_search: /max_results: got number, want integer"},
		{name: "a string is refused", args: `{"query":"a","max_results":"3"}`, wantError: "Error: invalid arguments for tool_search: /max_results: got string, want integer"},
		{name: "null is refused", args: `{"query":"a","max_results":null}`, wantError: "Error: invalid arguments for tool_search: /max_results: got null, want integer"},
		{name: "select is never capped", args: `{"query":"select:github_create_issue,github_list_issues,slack_post_message","max_results":1}`, wantCount: 3},
		{name: "required keyword honours it", args: `{"query":"+github","max_results":1}`, wantCount: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ts.Handler(t.Context(), &tool.Call{ID: "c1", Name: ToolSearchName, State: &thread.State{}}, json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantError != "" {
				if !res.IsError || !strings.HasPrefix(res.TextContent(), tt.wantError) || !strings.Contains(res.TextContent(), "max_results") {
					t.Fatalf("result = %q (IsError %v), want an error naming max_results", res.TextContent(), res.IsError)
				}
				return
			}
			if res.IsError || res.Update == nil || res.Update.Promoted == nil {
				t.Fatalf("result = %q (IsError %v, update %+v)", res.TextContent(), res.IsError, res.Update)
			}
			if got := len(res.Update.Promoted.Names); got != tt.wantCount {
				t.Errorf("promoted %d names %v, want %d", got, res.Update.Promoted.Names, tt.wantCount)
			}
			var defs []functionDefinition
			if err := json.Unmarshal([]byte(res.TextContent()), &defs); err != nil || len(defs) != tt.wantCount {
				t.Errorf("result holds %d definitions (%v), want %d", len(defs), err, tt.wantCount)
			}
		})
	}
}

// TestToolSearchSchemaStatesTheMaximum checks that the schema the model
// sees carries the configured maximum.
func TestToolSearchSchemaStatesTheMaximum(t *testing.T) {
	var schema struct {
		Properties struct {
			MaxResults struct {
				Type    string `json:"type"`
				Minimum int    `json:"minimum"`
				Maximum int    `json:"maximum"`
			} `json:"max_results"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(NewToolSearch(NewCatalog(nil), 7).InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	got := schema.Properties.MaxResults
	if diff := cmp.Diff(struct {
		Type     string
		Min, Max int
		Required []string
	}{"integer", 1, 7, []string{"query"}}, struct {
		Type     string
		Min, Max int
		Required []string
	}{got.Type, got.Minimum, got.Maximum, schema.Required}); diff != "" {
		t.Errorf("max_results schema (-want +got):\n%s", diff)
	}
}

// TestToolSearchDescriptionStatesMaxResults checks that the description
// the model reads names the max_results argument, its range with the
// configured maximum, and that it is refused, not reduced, outside it.
func TestToolSearchDescriptionStatesMaxResults(t *testing.T) {
	desc := NewToolSearch(NewCatalog(nil), 7).Description
	for _, want := range []string{"max_results", "from 1 to 7", "default 7", "refused"} {
		if !strings.Contains(desc, want) {
			t.Errorf("description lacks %q:\n%s", want, desc)
		}
	}
}
