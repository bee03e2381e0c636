package searcheval

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
)

func TestEvaluate(t *testing.T) {
	ids := map[string]string{"a": "A", "b": "B", "c": "C", "b2": "B"}
	results := map[string][]string{
		"q1": {"x", "a", "b"},      // both golds found, first at rank 2
		"q2": {"c", "b2"},          // any-of: b2 is another id of gold B
		"q3": {"x", "y", "z"},      // nothing
		"q4": {"a"},                // no gold: not scored
		"q5": {"y", "y", "c", "a"}, // c at rank 3, a past k
	}
	queries := []Query{
		{ID: "1", Query: "q1", GoldIDs: []string{"A", "B"}},
		{ID: "2", Query: "q2", GoldAnyOf: [][]string{{"X", "B"}}},
		{ID: "3", Query: "q3", GoldIDs: []string{"A"}},
		{ID: "4", Query: "q4"},
		{ID: "5", Query: "q5", GoldIDs: []string{"A", "C"}},
	}
	search := func(q string, k int) []string { return results[q] }
	got := Evaluate("m", search, ids, queries, 3)
	got.P50us, got.P99us = 0, 0
	want := Result{
		Method: "m", K: 3, Queries: 4,
		RecallAtK: 4.0 / 6, // A,B of q1; B of q2; C of q5 (A at rank 4 is past k)
		HitAtK:    3.0 / 4,
		MRR:       (1.0/2 + 1.0/2 + 0 + 1.0/3) / 4,
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); diff != "" {
		t.Errorf("Evaluate (-want +got):\n%s", diff)
	}
}

func TestDeerFlowRegexRanking(t *testing.T) {
	tools := []*tool.Tool{
		{Name: "list_files", Description: "List the issues of a repository"},
		{Name: "create_issue", Description: "Create an issue"},
		{Name: "search", Description: "Search code"},
	}
	d := NewDeerFlow(tools)
	tests := []struct {
		name, query string
		want        []string
	}{
		{"name matches rank first, stable", "issue", []string{"create_issue", "list_files"}},
		{"case-insensitive regex", "^LIST|code", []string{"list_files", "search"}},
		{"invalid regex is literal", "issue(", nil},
		{"natural query finds nothing", "create an issue on github", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, d.Search(tt.query, 5)); diff != "" {
				t.Errorf("Search(%q) (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestEvaluatePerStep(t *testing.T) {
	ids := map[string]string{"a": "A", "b": "B", "c": "C", "x": "X"}
	results := map[string][]string{
		"fetch it":  {"x", "a"},
		"save it":   {"b", "x"},
		"whole":     {"c"},
		"whole two": {"x"},
	}
	queries := []Query{
		{Query: "whole", GoldIDs: []string{"A", "B"}, Steps: "1. fetch it\n2) save it\n\n"}, // x b a: both found
		{Query: "whole", GoldIDs: []string{"C"}},                                            // no steps: the query
		{Query: "whole two", GoldIDs: []string{"A"}, Steps: "  \n"},                         // blank steps: the query
	}
	search := func(q string, k int) []string {
		r := results[q]
		return r[:min(k, len(r))]
	}
	got := EvaluatePerStep("m", search, ids, queries, 2)
	want := StepResult{
		Result:    Result{Method: "m", K: 2, Queries: 3, RecallAtK: 3.0 / 4, HitAtK: 2.0 / 3, MRR: (1.0/2 + 1) / 3},
		MeanTools: (3.0 + 1 + 1) / 3,
		Steps:     4,
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); diff != "" {
		t.Errorf("EvaluatePerStep (-want +got):\n%s", diff)
	}
}

func TestStepQueries(t *testing.T) {
	got := StepQueries("1. Looks up whois\n2) Fetch the sitemap\n\n10. Write a report\nno number\n")
	want := []string{"Looks up whois", "Fetch the sitemap", "Write a report", "no number"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StepQueries (-want +got):\n%s", diff)
	}
}
