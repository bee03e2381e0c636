package tool

import (
	"math"
	"sync"
	"time"
)

// ProgressEvent is the name of the event a running tool call emits to
// report its progress ([Call.ReportProgress]); its data is a [Progress].
// The gateway streams it as a custom frame (docs/api.md, "Tool
// progress"), `antler chat` shows it on its live line. It is unrelated to
// DeerFlow's tool_progress config section, which is a guard against
// tools that stop producing new results (agent.ToolProgressGuard).
const ProgressEvent = "tool_progress"

// Progress is one progress report of a running tool call.
type Progress struct {
	// Name is the called tool's name (set by ReportProgress).
	Name string `json:"name"`
	// Progress is how far the call got: a count or amount that grows
	// with each report (MCP's progress).
	Progress float64 `json:"progress"`
	// Total is what Progress grows to; 0 when unknown.
	Total float64 `json:"total,omitempty"`
	// Message says what the call is doing; it may be empty.
	Message string `json:"message,omitempty"`
	// Server and Tool name the MCP server and its own tool name, for
	// reports relayed from notifications/progress.
	Server string `json:"server,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// ElapsedMS is how long the call had run when it reported (set by
	// the throttle of [ThrottleProgress]).
	ElapsedMS int64 `json:"elapsed_ms"`
}

// Percent returns Progress as a whole percentage of Total, and false when
// Total is unknown.
func (p Progress) Percent() (int, bool) {
	if p.Total <= 0 || math.IsNaN(p.Progress) || math.IsInf(p.Progress, 0) {
		return 0, false
	}
	return int(math.Round(min(max(p.Progress/p.Total, 0), 1) * 100)), true
}

// ReportProgress emits p as the call's [ProgressEvent] (with Name set to
// the call's tool). It does nothing when the call has no event sink.
func (c *Call) ReportProgress(p Progress) {
	if c == nil || c.Emit == nil {
		return
	}
	p.Name = c.Name
	c.Emit(ProgressEvent, p)
}

// The throttle of progress reports, per call (see [ThrottleProgress]).
const (
	// ProgressMinInterval is the least time between two reports that say
	// the same (same message, same whole percentage).
	ProgressMinInterval = time.Second
	// MaxProgressEvents is the most reports one call passes on; later
	// ones are dropped.
	MaxProgressEvents = 500
	// maxProgressMessage bounds a report's message, in bytes.
	maxProgressMessage = 500
)

// ThrottleProgress wraps the event sink of one call so that its progress
// reports cannot flood the run's event stream: a report passes when its
// message or whole percentage differs from the last one passed, or
// ProgressMinInterval has gone by since; at most MaxProgressEvents pass;
// a message is cut to 500 bytes; and each report passing gets ElapsedMS,
// the time since ThrottleProgress was called. Other events pass as they
// are. The returned sink is safe for concurrent use.
func ThrottleProgress(emit func(event string, data any)) func(event string, data any) {
	return throttleProgress(emit, time.Now)
}

func throttleProgress(emit func(event string, data any), now func() time.Time) func(event string, data any) {
	var (
		mu      sync.Mutex
		start   = now()
		passed  int
		last    Progress
		lastPct = -1
		lastAt  time.Time
	)
	return func(event string, data any) {
		p, ok := data.(Progress)
		if event != ProgressEvent || !ok {
			emit(event, data)
			return
		}
		if len(p.Message) > maxProgressMessage {
			p.Message = validUTF8Prefix(p.Message, maxProgressMessage) + "…"
		}
		mu.Lock()
		t := now()
		pct, known := p.Percent()
		if !known {
			pct = -1
		}
		same := passed > 0 && p.Message == last.Message && pct == lastPct
		if passed >= MaxProgressEvents || (same && t.Sub(lastAt) < ProgressMinInterval) {
			mu.Unlock()
			return
		}
		passed++
		last, lastPct, lastAt = p, pct, t
		p.ElapsedMS = t.Sub(start).Milliseconds()
		mu.Unlock()
		emit(event, p)
	}
}

// validUTF8Prefix returns s cut to at most n bytes, never inside a UTF-8
// sequence.
func validUTF8Prefix(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
