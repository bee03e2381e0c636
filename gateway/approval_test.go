package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolpolicy"
)

// askReports is a hand-written policy: make_report is asked about.
type askReports struct{}

func (askReports) Decide(call *tool.Call, _ json.RawMessage) toolpolicy.Decision {
	if call.Name == "make_report" {
		return toolpolicy.Decision{Action: toolpolicy.ActionAsk, Rule: "tool_policy.rules[0]", Reason: "reports need a look"}
	}
	return toolpolicy.Decision{}
}

// TestApprovalRoundTrip: a call the policy asks about ends the run with
// DeerFlow's clarification card in the stream (the tool never ran); the
// frontend's answer, an ordinary next run, approves it (the file is
// written) or rejects it (it is not, and the model reads the reason).
func TestApprovalRoundTrip(t *testing.T) {
	tests := []struct {
		name, value, kind string
		wantStatus        int
		wantInResult      string
	}{
		{"approve writes the file", "approve", "option", http.StatusOK, "wrote /mnt/user-data/outputs/a.md"},
		{"reject does not, and the model reads the reason", "reject: not today", "text", http.StatusNotFound,
			"Error: the user rejected this call to make_report; it did not run. The user's reason: not today"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"name": "a.md", "text": "hi"})
			m := modeltest.New(
				modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "call_w", Name: "make_report", Arguments: args}}},
				modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
					return modeltest.Turn{Text: "The tool said: " + modeltest.LastMessage(req).Content}
				}},
			)
			e := newEnv(t, envOptions{model: m, toolMiddlewares: []tool.Middleware{agent.Approval(agent.ApprovalOptions{Decider: askReports{}})}})
			tid := uuid.NewString()
			artifact := "/api/threads/" + tid + "/artifacts/mnt/user-data/outputs/a.md"

			resp := e.startStream(tid, "", runBody(tid, humanInput("Write a.md", nil)))
			rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tid)
			tr, err := readAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			msgs := messagesOf(tr.Last())
			card := msgs[len(msgs)-1]
			if card["type"] != "tool" || card["name"] != "ask_clarification" || card["tool_call_id"] != "call_w" || card["id"] != "approval:call_w" {
				t.Fatalf("last message = %v", card)
			}
			hi := card["artifact"].(map[string]any)["human_input"].(map[string]any)
			if hi["kind"] != "human_input_request" || hi["source"] != agent.ApprovalSource || hi["input_mode"] != "choice_with_other" ||
				len(hi["options"].([]any)) != 3 || !strings.Contains(hi["context"].(string), "reports need a look") {
				t.Errorf("human_input = %v", hi)
			}
			e.waitRun(tid, rid, "success")
			if got := e.status("GET", artifact, "", nil); got != http.StatusNotFound {
				t.Fatalf("the file exists before the answer (status %d)", got)
			}

			answer := humanInput(`For your clarification "Allow make_report to run?", my answer is: `+tt.value, map[string]any{"hide_from_ui": true,
				"human_input_response": map[string]any{"version": 1, "kind": "human_input_response", "source": agent.ApprovalSource,
					"request_id": hi["request_id"], "response_kind": tt.kind, "option_id": "approve", "value": tt.value}})
			resp = e.startStream(tid, "", runBody(tid, answer))
			tr, err = readAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			msgs = messagesOf(tr.Last())
			if got := msgs[len(msgs)-1]["content"]; got != "The tool said: "+tt.wantInResult {
				t.Errorf("final answer = %q", got)
			}
			if got := e.status("GET", artifact, "", nil); got != tt.wantStatus {
				t.Errorf("artifact status %d, want %d", got, tt.wantStatus)
			}
			resp = e.do("GET", artifact, "", nil)
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tt.wantStatus == http.StatusOK && string(data) != "hi" {
				t.Errorf("file = %q", data)
			}
		})
	}
}
