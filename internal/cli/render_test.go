package cli

import (
	"bytes"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/thread"
)

// TestRendererPrintsTitle checks that text mode shows the thread's
// automatic title once it is set, on the status stream, and that other
// state events print nothing.
func TestRendererPrintsTitle(t *testing.T) {
	title := "Weather in Paris"
	other := "not a title"
	tests := []struct {
		name       string
		ev         agent.Event
		wantStderr string
	}{
		{"title", agent.Event{Type: agent.EventState, Name: agent.TitleNode, Update: &thread.Update{Title: &title}}, "· title: Weather in Paris\n"},
		{"another node's title field", agent.Event{Type: agent.EventState, Name: "SomethingElse", Update: &thread.Update{Title: &other}}, ""},
		{"state without a title", agent.Event{Type: agent.EventState, Name: agent.TitleNode, Update: &thread.Update{}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			r := &renderer{w: &out, errw: &errw, status: &statusLine{w: &errw}}
			r.event(agent.Event{Type: agent.EventMessageDelta, Delta: "It is sunny."})
			r.event(tt.ev)
			if got := errw.String(); got != tt.wantStderr {
				t.Errorf("stderr = %q, want %q", got, tt.wantStderr)
			}
			wantOut := "It is sunny."
			if tt.wantStderr != "" {
				wantOut += "\n" // the answer's line is ended before the title
			}
			if got := out.String(); got != wantOut {
				t.Errorf("stdout = %q, want %q", got, wantOut)
			}
		})
	}
}
