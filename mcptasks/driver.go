package mcptasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/tool"
)

// Bounds of what a server's answers may put in the store (DeerFlow's).
const (
	maxRemoteIDLen     = 255
	maxErrorChars      = 4000
	maxToolErrorChars  = 500
	maxInputRequired   = 64 << 10
	maxPollAfterSecond = 86_400
)

// ProtocolError is an answer of a task tool that breaks the toolset
// contract (no structuredContent, a missing task_id, an unknown status).
// Retrying cannot help: a poll that gets one fails the task.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return e.Msg }

func protocolErrorf(format string, args ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...)}
}

// MCP calls the MCP servers' tools: mcptools.Manager.
type MCP interface {
	// ToolsOf returns the tools of the named servers only.
	ToolsOf(ctx context.Context, servers []string) ([]*tool.Tool, error)
}

// caller calls one raw tool of a server for a user and a thread, through
// the tool the MCP manager made of it (so that the server's sessions,
// bounds, OAuth and per-thread processes apply as to any other call).
type caller struct{ mcp MCP }

func (c caller) call(ctx context.Context, server, raw, userID, threadID string, args any) (*tool.Result, error) {
	tools, err := c.mcp.ToolsOf(ctx, []string{server})
	if err != nil {
		return nil, fmt.Errorf("MCP server '%s': %w", server, err)
	}
	var t *tool.Tool
	for _, cand := range tools {
		if cand.Meta[mcptools.MetaServer] == server && cand.Meta[mcptools.MetaTool] == raw {
			t = cand
			break
		}
	}
	if t == nil {
		return nil, fmt.Errorf("MCP server '%s' offers no tool %q (is it running, and is the tool in disabled_tools?)", server, raw)
	}
	body, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	call := &tool.Call{Name: t.Name, ThreadID: threadID, UserID: userID, Meta: t.Meta}
	return t.Handler(ctx, call, body)
}

// structured returns the structuredContent of a task tool's result as
// JSON; an error result is a plain error (worth retrying), a result
// without structuredContent a ProtocolError.
func structured(r *tool.Result, raw string) (json.RawMessage, error) {
	if r == nil {
		return nil, protocolErrorf("MCP task tool %q returned nothing", raw)
	}
	if r.IsError {
		msg := fmt.Sprintf("MCP task tool %q returned an error", raw)
		if text := strings.TrimSpace(strings.TrimPrefix(resultText(r), "Error:")); text != "" {
			msg += ": " + truncateChars(text, maxToolErrorChars)
		}
		return nil, errors.New(msg)
	}
	v, ok := mcptools.StructuredContent(r)
	if !ok {
		return nil, protocolErrorf("MCP task tool %q must return structuredContent; its text is not parsed", raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, protocolErrorf("MCP task tool %q returned structuredContent that is not JSON: %v", raw, err)
	}
	return b, nil
}

func resultText(r *tool.Result) string {
	var parts []string
	for _, b := range r.Content {
		if b.Type == tool.BlockText && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// submitAnswer is the structuredContent of a submit tool.
type submitAnswer struct {
	TaskID string `json:"task_id"`
	Status string `json:"status"`
}

func parseSubmit(b json.RawMessage, raw string) (string, error) {
	var a submitAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return "", protocolErrorf("invalid structuredContent from MCP task tool %q: %v", raw, err)
	}
	switch {
	case strings.TrimSpace(a.TaskID) == "":
		return "", protocolErrorf("invalid structuredContent from MCP task tool %q: task_id is missing", raw)
	case len(a.TaskID) > maxRemoteIDLen:
		// The id is returned with the error: the task runs and is cancelled.
		return a.TaskID, protocolErrorf("invalid structuredContent from MCP task tool %q: task_id is longer than %d characters", raw, maxRemoteIDLen)
	case a.Status != "running":
		return "", protocolErrorf("invalid structuredContent from MCP task tool %q: status must be \"running\", got %q", raw, a.Status)
	}
	return a.TaskID, nil
}

// statusAnswer is the structuredContent of a status or cancel tool.
type statusAnswer struct {
	TaskID           string          `json:"task_id"`
	Status           string          `json:"status"`
	Result           json.RawMessage `json:"result"`
	Error            *string         `json:"error"`
	ErrorCode        *string         `json:"error_code"`
	InputRequired    json.RawMessage `json:"input_required"`
	PollAfterSeconds *float64        `json:"poll_after_seconds"`
}

// snapshot is one normalised answer of the server about a task.
type snapshot struct {
	status        string
	result        json.RawMessage
	errText       string
	inputRequired json.RawMessage
	pollAfter     float64 // seconds; 0: none suggested
}

// The server's statuses and Antler's.
var remoteStatus = map[string]string{
	"running":        store.MCPTaskWorking,
	"input_required": store.MCPTaskInputRequired,
	"completed":      store.MCPTaskCompleted,
	"failed":         store.MCPTaskFailed,
	"cancelled":      store.MCPTaskCancelled,
}

// parseStatus reads a status (or, with cancel, a cancel) answer about the
// task whose remote id is want.
func parseStatus(b json.RawMessage, raw, want string, cancel bool) (snapshot, error) {
	var a statusAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return snapshot{}, protocolErrorf("invalid structuredContent from MCP task tool %q: %v", raw, err)
	}
	if a.ErrorCode != nil && *a.ErrorCode == "task_not_found" {
		msg := "the remote MCP task was not found"
		if a.Error != nil && *a.Error != "" {
			msg = *a.Error
		}
		return snapshot{status: store.MCPTaskFailed, errText: msg}, nil
	}
	if a.TaskID != want {
		return snapshot{}, protocolErrorf("MCP task tool %q answered about task %q, not the tracked %q", raw, truncateChars(a.TaskID, maxRemoteIDLen), want)
	}
	st, ok := remoteStatus[a.Status]
	if !ok || (cancel && !store.MCPTaskTerminal(st)) {
		return snapshot{}, protocolErrorf("invalid structuredContent from MCP task tool %q: unexpected status %q", raw, truncateChars(a.Status, 64))
	}
	s := snapshot{status: st, errText: deref(a.Error)}
	if !isNull(a.Result) {
		s.result = a.Result
	}
	if st == store.MCPTaskInputRequired {
		if isNull(a.InputRequired) {
			return snapshot{}, protocolErrorf("invalid structuredContent from MCP task tool %q: input_required status without input_required", raw)
		}
		if len(a.InputRequired) > maxInputRequired {
			return snapshot{}, protocolErrorf("MCP task tool %q: input_required is larger than %d bytes", raw, maxInputRequired)
		}
		s.inputRequired = a.InputRequired
	}
	if p := a.PollAfterSeconds; p != nil {
		if math.IsNaN(*p) || math.IsInf(*p, 0) || *p <= 0 {
			return snapshot{}, protocolErrorf("invalid structuredContent from MCP task tool %q: poll_after_seconds must be a positive number", raw)
		}
		s.pollAfter = min(*p, maxPollAfterSecond)
	}
	return s, nil
}

func isNull(b json.RawMessage) bool {
	t := strings.TrimSpace(string(b))
	return t == "" || t == "null"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// truncateChars cuts s to at most n characters (runes), on a rune
// boundary.
func truncateChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
