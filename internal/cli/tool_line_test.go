package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/tool"
)

// lastStatus is the text of the last status line drawn on a fake
// terminal ("" when the last thing done was a clear).
func lastStatus(out string) string {
	i := strings.LastIndex(out, "\r\x1b[2K")
	if i < 0 {
		return ""
	}
	return out[i+len("\r\x1b[2K"):]
}

// TestRendererToolLine: on a terminal, running tool calls show on the
// live line with their progress message and percentage, a call quiet
// for long shows its elapsed time, the line follows the calls as they
// end; piped output gets none of it.
func TestRendererToolLine(t *testing.T) {
	var term bytes.Buffer
	now := time.Unix(1000, 0)
	status := &statusLine{w: &term, enabled: true} // a fake terminal
	r := &renderer{w: &bytes.Buffer{}, errw: &term, status: status, tools: newToolLine(status, func() time.Time { return now })}

	steps := []struct {
		name    string
		advance time.Duration
		ev      *agent.Event // nil: a tick
		want    string
	}{
		{"a call starts", 0, &agent.Event{Type: agent.EventToolStart, ToolCallID: "c1", Name: "index_repo"}, "running index_repo …"},
		{"a second call starts", 0, &agent.Event{Type: agent.EventToolStart, ToolCallID: "c2", Name: "bash"}, "running index_repo … · bash …"},
		{"the first reports progress", time.Second, &agent.Event{Type: tool.ProgressEvent, ToolCallID: "c1", Name: "index_repo",
			Data: tool.Progress{Name: "index_repo", Progress: 1, Total: 3, Message: "reading files"}}, "running index_repo: reading files 33% · bash …"},
		{"the quiet call shows its elapsed time", 5 * time.Second, nil, "running index_repo: reading files 33% (6s) · bash (6s)"},
		{"a report without total or message", 0, &agent.Event{Type: tool.ProgressEvent, ToolCallID: "c1", Name: "index_repo",
			Data: tool.Progress{Progress: 7}}, "running index_repo (7) · bash (6s)"},
		{"a task call shows its subagent's step", 0, &agent.Event{Type: agent.EventTaskRunning, ToolCallID: "c2", Name: "bash",
			Data: map[string]any{"type": "task_running", "task_id": "c2", "message_index": 4}}, "running index_repo (7) · bash: subagent step 4"},
		{"the first ends", 0, &agent.Event{Type: agent.EventToolEnd, ToolCallID: "c1", Name: "index_repo"}, "running bash: subagent step 4"},
		{"the last ends", 0, &agent.Event{Type: agent.EventToolEnd, ToolCallID: "c2", Name: "bash"}, "thinking…"},
		{"ticks with nothing running draw nothing", 10 * time.Second, nil, "thinking…"},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if s.ev != nil {
			r.event(*s.ev)
		} else {
			r.tick()
		}
		if got := lastStatus(term.String()); got != s.want {
			t.Errorf("%s: live line %q, want %q", s.name, got, s.want)
		}
	}

	// Piped: the same events print the tool lines only.
	var piped bytes.Buffer
	plain := &statusLine{w: &piped}
	r = &renderer{w: &bytes.Buffer{}, errw: &piped, status: plain, tools: newToolLine(plain, time.Now)}
	r.event(agent.Event{Type: agent.EventToolStart, ToolCallID: "c1", Name: "index_repo"})
	r.event(agent.Event{Type: tool.ProgressEvent, ToolCallID: "c1", Data: tool.Progress{Progress: 1, Total: 2, Message: "half"}})
	r.tick()
	if got := piped.String(); strings.Contains(got, "\x1b") || strings.Contains(got, "half") {
		t.Errorf("piped output has the live line: %q", got)
	}
	if stop := r.tools.tickEvery(time.Millisecond, r.tick); stop == nil {
		t.Error("no stop func")
	} else {
		stop()
	}
}

func TestToolLine_boundedWidth(t *testing.T) {
	var term bytes.Buffer
	status := &statusLine{w: &term, enabled: true}
	l := newToolLine(status, time.Now)
	l.start(agent.Event{ToolCallID: "c1", Name: "t"})
	l.report(agent.Event{ToolCallID: "c1", Data: tool.Progress{Message: strings.Repeat("word ", 100), Progress: 1, Total: 2}})
	if got := []rune(lastStatus(term.String())); len(got) != toolLineMaxRunes || got[len(got)-1] != '…' {
		t.Errorf("line of %d runes, want %d ending in …", len(got), toolLineMaxRunes)
	}
}
