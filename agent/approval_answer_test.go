package agent

import (
	"testing"

	"github.com/antlerhq/antler/model"
)

func TestParseApprovalAnswer(t *testing.T) {
	tests := []struct {
		name string
		msg  model.Message
		want approvalAnswer
	}{
		{"approve", model.UserText("approve"), approvalAnswer{approve: true}},
		{"yes approves once", model.UserText(" Yes. "), approvalAnswer{approve: true}},
		{"for this thread", model.UserText("Approve for this thread"), approvalAnswer{approve: true, thread: true}},
		{"reject with a reason", model.UserText("reject: not that file"), approvalAnswer{reason: "not that file"}},
		{"rejected with a reason", model.UserText("Rejected - too risky"), approvalAnswer{reason: "too risky"}},
		{"no", model.UserText("no"), approvalAnswer{}},
		{"a word starting with reject is no answer", model.UserText("rejection letters"), approvalAnswer{reason: "rejection letters"}},
		{"other text rejects with itself as the reason", model.UserText("write b.txt instead"), approvalAnswer{reason: "write b.txt instead"}},
		{"the frontend's wrapped text", model.UserText(`For your clarification "Allow bash to run?", my answer is: approve for this thread`),
			approvalAnswer{approve: true, thread: true}},
		{"the frontend's typed answer", model.Message{Role: model.RoleUser, Content: "For your clarification ...",
			Meta: map[string]any{"human_input_response": map[string]any{"request_id": "approval:c9", "response_kind": "text", "value": "reject: wrong dir"}}},
			approvalAnswer{requestID: "approval:c9", reason: "wrong dir"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseApprovalAnswer(tt.msg); got != tt.want {
				t.Errorf("parseApprovalAnswer = %+v, want %+v", got, tt.want)
			}
		})
	}
}
