package cli

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/tool"
)

// The live tool line of `antler run` and `chat` on a terminal.
const (
	// toolLineQuiet is how long a call may go without reporting before
	// the line shows its elapsed time.
	toolLineQuiet = 5 * time.Second
	// toolLineTick is how often the line is redrawn while calls run, so
	// that elapsed times move.
	toolLineTick = time.Second
	// toolLineMaxRunes bounds the line, so that it never wraps on a
	// common terminal (a wrapped line cannot be cleared with \r).
	toolLineMaxRunes = 100
)

// toolLine shows, on the status line (so on a terminal only; piped
// output and NO_COLOR get nothing), the tool calls still running: each
// call's last progress report (its message and percentage), and, for a
// call that has reported nothing for toolLineQuiet, how long it has run.
// Its methods may be called from the event callback and the ticker at
// once; a nil *toolLine does nothing.
type toolLine struct {
	status *statusLine
	now    func() time.Time

	mu    sync.Mutex
	calls []*runningCall // in start order; guarded by mu
}

type runningCall struct {
	id, name        string
	started, report time.Time      // report: the last report, or the start
	progress        *tool.Progress // nil until the first report
}

func newToolLine(status *statusLine, now func() time.Time) *toolLine {
	return &toolLine{status: status, now: now}
}

// start records a call that began (EventToolStart) and shows the line.
func (l *toolLine) start(ev agent.Event) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.now()
	l.calls = append(l.calls, &runningCall{id: ev.ToolCallID, name: ev.Name, started: t, report: t})
	l.showLocked()
}

// report records a call's progress (a tool.ProgressEvent, or a task
// call's task_running: its subagent's step) and shows the line.
func (l *toolLine) report(ev agent.Event) {
	if l == nil {
		return
	}
	p, ok := ev.Data.(tool.Progress)
	if !ok {
		if p, ok = taskStep(ev.Data); !ok {
			return
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.calls {
		if c.id == ev.ToolCallID {
			c.progress, c.report = &p, l.now()
		}
	}
	l.showLocked()
}

// end forgets a call that ended (EventToolEnd); the line stays while
// others run.
func (l *toolLine) end(ev agent.Event) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, c := range l.calls {
		if c.id == ev.ToolCallID {
			l.calls = append(l.calls[:i], l.calls[i+1:]...)
			break
		}
	}
	l.showLocked()
}

// tick redraws the line while calls run.
func (l *toolLine) tick() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.showLocked()
}

// tickEvery calls tick every d until the returned stop is called; on
// anything but a terminal it starts nothing.
func (l *toolLine) tickEvery(d time.Duration, tick func()) (stop func()) {
	if l == nil || l.status == nil || !l.status.enabled {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				tick()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

func (l *toolLine) showLocked() {
	if len(l.calls) > 0 {
		l.status.show(l.renderLocked())
	}
}

// renderLocked is the line: "running " and each call, joined by " · ".
func (l *toolLine) renderLocked() string {
	now := l.now()
	parts := make([]string, 0, len(l.calls))
	for _, c := range l.calls {
		var b strings.Builder
		b.WriteString(c.name)
		if p := c.progress; p != nil {
			if p.Message != "" {
				b.WriteString(": " + strings.Join(strings.Fields(p.Message), " "))
			}
			if pct, ok := p.Percent(); ok {
				fmt.Fprintf(&b, " %d%%", pct)
			} else if p.Message == "" {
				fmt.Fprintf(&b, " (%g)", p.Progress)
			}
		}
		if now.Sub(c.report) >= toolLineQuiet {
			fmt.Fprintf(&b, " (%s)", now.Sub(c.started).Round(time.Second))
		} else if c.progress == nil {
			b.WriteString(" …")
		}
		parts = append(parts, b.String())
	}
	line := "running " + strings.Join(parts, " · ")
	if r := []rune(line); len(r) > toolLineMaxRunes {
		line = string(r[:toolLineMaxRunes-1]) + "…"
	}
	return line
}

// tick redraws the live tool line between events (the ticker's call).
func (r *renderer) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tools.tick()
}

// taskStep is the progress a task_running event stands for: the
// subagent's step.
func taskStep(data any) (tool.Progress, bool) {
	m, ok := data.(map[string]any)
	if !ok || m["type"] != string(agent.EventTaskRunning) {
		return tool.Progress{}, false
	}
	switch n := m["message_index"].(type) {
	case int:
		return tool.Progress{Message: fmt.Sprintf("subagent step %d", n)}, true
	case float64:
		return tool.Progress{Message: fmt.Sprintf("subagent step %d", int(n))}, true
	}
	return tool.Progress{Message: "subagent working"}, true
}

// toolFailureMaxRunes bounds the reason shown after a failed call's ✗
// line (without --verbose).
const toolFailureMaxRunes = 200

// toolEndLine is the line of an ended call: "✓ name (1.2s)", or for a
// failure "✗ name (0s): " and the first line of what the model was told
// (without its "Error: " prefix), or with verbose all of it, its further
// lines indented.
func toolEndLine(ev agent.Event, verbose bool, p *painter) string {
	d := time.Duration(ev.DurationMS * float64(time.Millisecond)).Round(time.Millisecond)
	if !ev.IsError {
		return fmt.Sprintf("%s %s (%s)", p.green("✓"), ev.Name, d)
	}
	line := fmt.Sprintf("%s %s (%s)", p.red("✗"), ev.Name, d)
	if ev.Message == nil {
		return line
	}
	text := strings.TrimSpace(ev.Message.Content)
	text = strings.TrimSpace(strings.TrimPrefix(text, "Error:"))
	if text == "" {
		return line
	}
	if verbose {
		return line + ": " + strings.ReplaceAll(text, "\n", "\n  ")
	}
	first, rest, _ := strings.Cut(text, "\n")
	first = strings.TrimSpace(first)
	if r := []rune(first); len(r) > toolFailureMaxRunes {
		first = string(r[:toolFailureMaxRunes-1]) + "…"
	} else if strings.TrimSpace(rest) != "" {
		first += " …"
	}
	return line + ": " + first
}

// names returns the names of the calls still running, in start order.
func (l *toolLine) names() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.calls))
	for _, c := range l.calls {
		out = append(out, c.name)
	}
	return out
}
