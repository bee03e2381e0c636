package thread

import (
	"encoding/json"
	"fmt"
	"testing"
)

// A thread keeps at most maxPendingSubagentApprovals paused subagents
// (the newest), however many plain calls are pending, and a saved state
// survives a JSON round trip of the thread state (a restart).
func TestApprovals_pausedSubagentsAreCappedAndSurviveARoundTrip(t *testing.T) {
	var upd []Approval
	for i := range maxPendingSubagentApprovals + 3 {
		upd = append(upd, Approval{CallID: fmt.Sprintf("p%d", i), Tool: "write_file"},
			Approval{CallID: fmt.Sprintf("t%d", i), Tool: "task", Subagent: &SubagentApproval{Type: "general-purpose",
				CallID: "s1", Tool: "write_file", State: json.RawMessage(`{"messages":[]}`)}})
	}
	s := &State{}
	if err := s.Apply(&Update{Approvals: upd}); err != nil {
		t.Fatal(err)
	}
	paused, plain := 0, 0
	for _, a := range s.Approvals {
		if a.Subagent != nil {
			paused++
		} else {
			plain++
		}
	}
	if paused != maxPendingSubagentApprovals || plain != maxPendingSubagentApprovals+3 {
		t.Errorf("kept %d paused subagents and %d plain calls", paused, plain)
	}
	if s.Approvals[len(s.Approvals)-1].CallID != fmt.Sprintf("t%d", maxPendingSubagentApprovals+2) {
		t.Errorf("the newest pause was dropped: %+v", s.Approvals[len(s.Approvals)-1])
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if p := back.Approvals[len(back.Approvals)-1].Subagent; p == nil || string(p.State) != `{"messages":[]}` || p.Tool != "write_file" {
		t.Errorf("after a round trip: %+v", p)
	}
}
