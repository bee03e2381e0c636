package thread

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestApprovals_reducerUpsertsResolvesAndCaps(t *testing.T) {
	a := Approval{CallID: "c1", RequestID: "approval:c1", Tool: "write_file", Arguments: json.RawMessage(`{"path":"a"}`), Rule: "tool_policy.rules[0]"}
	b := Approval{CallID: "c2", RequestID: "approval:c2", Tool: "bash", Arguments: json.RawMessage(`{}`)}
	a2 := a
	a2.Reason = "again"
	tests := []struct {
		name          string
		existing, upd []Approval
		want          []Approval
	}{
		{"appends in call order", []Approval{a}, []Approval{b}, []Approval{a, b}},
		{"same call id replaces", []Approval{a, b}, []Approval{a2}, []Approval{a2, b}},
		{"resolved removes only its call", []Approval{a, b}, []Approval{{CallID: "c1", Resolved: true}}, []Approval{b}},
		{"resolving an unknown call changes nothing", []Approval{a}, []Approval{{CallID: "zz", Resolved: true}}, []Approval{a}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &State{Approvals: tt.existing}
			if err := s.Apply(&Update{Approvals: tt.upd}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, s.Approvals); diff != "" {
				t.Errorf("approvals (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("only the most recent are kept", func(t *testing.T) {
		var many []Approval
		for i := range maxPendingApprovals + 3 {
			many = append(many, Approval{CallID: fmt.Sprint(i)})
		}
		got := mergeApprovals(nil, many)
		if len(got) != maxPendingApprovals || got[0].CallID != "3" {
			t.Errorf("kept %d, first %q", len(got), got[0].CallID)
		}
	})
}

func TestApprovalGrants_rememberedOncePerToolAndRule(t *testing.T) {
	s := &State{}
	g := ApprovalGrant{Tool: "write_file", Rule: "tool_policy.rules[1]"}
	for range 2 {
		if err := s.Apply(&Update{ApprovalGrants: []ApprovalGrant{g}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.ApprovalGrants) != 1 || !s.HasApprovalGrant("write_file", "tool_policy.rules[1]") {
		t.Errorf("grants %v", s.ApprovalGrants)
	}
	if s.HasApprovalGrant("write_file", "tool_policy.rules[2]") || s.HasApprovalGrant("bash", "tool_policy.rules[1]") {
		t.Error("a grant for one tool and rule approved another")
	}
	c := s.Clone()
	c.ApprovalGrants[0].Tool = "x"
	if s.ApprovalGrants[0].Tool != "write_file" {
		t.Error("Clone shares the grants")
	}
}
