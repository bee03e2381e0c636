package acptools

import (
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
)

// An agent's tool calls and answer chunks are reported as progress of the
// invoke_acp_agent call, with host paths masked; without an event sink
// nothing is reported.
func TestClientReportsAgentProgress(t *testing.T) {
	var got []tool.Progress
	call := &tool.Call{Name: "invoke_acp_agent", Emit: func(event string, data any) {
		if event == tool.ProgressEvent {
			got = append(got, data.(tool.Progress))
		}
	}}
	mask := func(s string) string { return strings.ReplaceAll(s, "/host/ws", "/mnt/acp-workspace") }
	c := &client{logger: discard(), report: acpProgress(call, mask)}
	for _, u := range []acp.SessionUpdate{
		acp.StartToolCall("t1", "Read /host/ws/a.txt"),
		acp.UpdateAgentMessageText("Hel"),
		acp.UpdateAgentMessageText("lo"),
	} {
		if err := c.SessionUpdate(t.Context(), acp.SessionNotification{Update: u}); err != nil {
			t.Fatal(err)
		}
	}
	want := []tool.Progress{
		{Name: "invoke_acp_agent", Message: "tool call: Read /mnt/acp-workspace/a.txt"},
		{Name: "invoke_acp_agent", Progress: 1, Message: "writing its answer"},
		{Name: "invoke_acp_agent", Progress: 2, Message: "writing its answer"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if c.collected() != "Hello" {
		t.Errorf("collected %q", c.collected())
	}
	if acpProgress(&tool.Call{}, mask) != nil {
		t.Error("a call without a sink gets a reporter")
	}
}
