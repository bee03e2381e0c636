package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// TestDanglingToolCalls_aStepScansOnlyWhatItAdded: in a run of two model
// calls on a 1,000-message thread, the second well-formedness check
// scans only the two messages the tool step added, not the history again.
func TestDanglingToolCalls_aStepScansOnlyWhatItAdded(t *testing.T) {
	dangling, scanned := agent.NewCountingDanglingToolCalls()
	m := &fakeModel{steps: []step{calls("probe", `{}`), answer("done")}}
	a, err := agent.New(agent.Options{Model: m, Tools: []*tool.Tool{textTool("probe", "ok")}, SystemPrompt: "sys",
		ModelMiddlewares: []tool.ModelMiddleware{dangling}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(t.Context(), agent.Input{ThreadID: "t", UserID: "u", State: historyState(1000),
		Messages: []model.Message{model.UserText("go")}}, nil); err != nil {
		t.Fatal(err)
	}
	first, second := len(m.request(0).Messages), len(m.request(1).Messages)
	if first != 1+1000+1 || second != first+2 {
		t.Fatalf("requests of %d and %d messages", first, second)
	}
	// The first request whole, then the call and its result.
	if got, want := scanned(), first+2; got != want {
		t.Errorf("the checks scanned %d messages, want %d (a rescan of the history would be %d)", got, want, first+second)
	}
}

// TestDanglingToolCalls_repairsAfterAWarmPrefix: after a well-formed
// request, a request that extends its array is repaired exactly as a
// fresh middleware repairs it, whatever the added messages hold, and so
// is a request in another array with the damage anywhere.
func TestDanglingToolCalls_repairsAfterAWarmPrefix(t *testing.T) {
	prefix := append([]model.Message{model.SystemText("sys")}, historyState(20).Messages...)
	prefix = append(prefix,
		model.Message{ID: "a1", Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "probe", Arguments: json.RawMessage(`{}`)}}},
		model.Message{ID: "r1", Role: model.RoleTool, ToolCallID: "c1", Name: "probe", Content: "ok"})
	call := func(id, name, args string) model.Message {
		return model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: name, Arguments: json.RawMessage(args)}}}
	}
	result := func(id string) model.Message {
		return model.Message{Role: model.RoleTool, ToolCallID: id, Name: "probe", Content: "ok"}
	}
	tests := []struct {
		name string
		tail []model.Message
		// moved puts the damage in a copy of the prefix (another array)
		// instead of appending it to the warm one.
		moved bool
	}{
		{name: "dangling call at the end", tail: []model.Message{call("c2", "probe", `{}`)}},
		{name: "dangling call then a user message", tail: []model.Message{call("c2", "probe", `{}`), model.UserText("next")}},
		{name: "orphan result", tail: []model.Message{result("gone")}},
		{name: "second result of an answered call", tail: []model.Message{result("c1")}},
		{name: "call without an id", tail: []model.Message{call("", "probe", `{}`), result("")}},
		{name: "blank name", tail: []model.Message{call("c2", " ", `{}`), result("c2")}},
		{name: "arguments not an object", tail: []model.Message{call("c2", "probe", `[1]`), result("c2")}},
		{name: "dangling call in the middle of another array", tail: []model.Message{call("c2", "probe", `{}`)}, moved: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []model.Message
			mw := agent.DanglingToolCalls()(func(ctx context.Context, c *tool.ModelCall) (*model.Response, error) {
				got = c.Request.Messages
				return &model.Response{}, nil
			})
			buf := make([]model.Message, len(prefix), len(prefix)+len(tc.tail))
			copy(buf, prefix)
			warm := buf[:len(prefix):len(prefix)]
			if _, err := mw(t.Context(), &tool.ModelCall{Request: &model.Request{Messages: warm}}); err != nil {
				t.Fatal(err)
			}
			if &got[0] != &buf[0] || len(got) != len(prefix) {
				t.Fatal("the well-formed prefix was rewritten")
			}
			var msgs []model.Message
			if tc.moved {
				msgs = append(append(append([]model.Message(nil), prefix[:5]...), tc.tail...), prefix[5:]...)
			} else {
				msgs = append(buf, tc.tail...)
				if &msgs[0] != &buf[0] {
					t.Fatal("the tail did not extend the warm array")
				}
			}
			if _, err := mw(t.Context(), &tool.ModelCall{Request: &model.Request{Messages: msgs}}); err != nil {
				t.Fatal(err)
			}
			want, _ := agent.RepairToolCalls(append([]model.Message(nil), msgs...))
			if want == nil {
				t.Fatal("the case needs no repair")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("request after a warm prefix (-cold repair +got):\n%s", diff)
			}
		})
	}
}
