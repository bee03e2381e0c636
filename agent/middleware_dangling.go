package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// Texts of the placeholder results DanglingToolCalls inserts (DeerFlow's).
const (
	DanglingInterruptedText = "[Tool call was interrupted and did not return a result.]"
	DanglingEmptyNameText   = "[Tool call could not be executed because its name was missing or empty. Use one of the available tool names when retrying.]"
	// unknownToolName replaces a missing or blank tool name in requests.
	unknownToolName   = "unknown_tool"
	syntheticIDPrefix = "deerflow_synthetic_tool_call_"
)

// DanglingToolCalls returns DeerFlow's DanglingToolCallMiddleware as a
// model middleware. Before each model request it makes the history one
// that strict providers accept, without touching the persisted state:
//   - tool calls with a missing id get a stable synthetic id (and their
//     results, when they can be attributed, follow);
//   - blank tool names become "unknown_tool"; arguments that are not a
//     JSON object become "{}";
//   - every tool call is followed by its result; a call without one (the
//     run was cancelled or crashed mid-step) gets a placeholder error
//     result right after its assistant message;
//   - a tool result whose call is gone (an orphan) is dropped.
//
// The check that a history needs no repair is incremental: the
// middleware remembers the last well-formed request's array and length,
// and a request that extends it (same first element, at least as many
// messages, as the loop's request buffer gives them, whose messages
// before its length are never written again, and a middleware clones a
// request before it rewrites one) checks only the messages added since.
// Any other request is checked whole; a history that needs repair is
// repaired whole, as before.
func DanglingToolCalls() tool.ModelMiddleware {
	return danglingToolCalls(&wellFormedPrefix{})
}

// danglingToolCalls is DanglingToolCalls remembering its well-formed
// prefix in checked.
func danglingToolCalls(checked *wellFormedPrefix) tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if checked.ok(call.Request.Messages) {
				return next(ctx, call)
			}
			if patched, n := RepairToolCalls(call.Request.Messages); patched != nil {
				if n > 0 {
					call.Log().Warn("repaired dangling tool calls before the model request", "placeholders", n)
				}
				c := *call
				req := call.Request.Clone()
				req.Messages = patched
				c.Request = req
				call = &c
			}
			return next(ctx, call)
		}
	}
}

// RepairToolCalls returns the repaired history, or nil when msgs needs no
// repair; n counts the placeholders inserted.
func RepairToolCalls(msgs []model.Message) (patched []model.Message, n int) {
	if wellFormed(msgs) {
		return nil, 0
	}
	msgs = relabelToolCallIDs(msgs)
	results := map[string][]model.Message{}
	for _, m := range msgs {
		if m.Role == model.RoleTool {
			results[m.ToolCallID] = append(results[m.ToolCallID], m)
		}
	}
	out := make([]model.Message, 0, len(msgs)+2)
	for _, m := range msgs {
		if m.Role == model.RoleTool {
			continue // re-emitted after its call, or dropped as an orphan
		}
		if m.Role != model.RoleAssistant || len(m.ToolCalls) == 0 {
			out = append(out, m)
			continue
		}
		orig := m.ToolCalls
		m.ToolCalls = make([]model.ToolCall, len(orig))
		for i, tc := range orig {
			tc.Name = normalizeToolName(tc.Name)
			if !isJSONObjectBytes(tc.Arguments) {
				tc.Arguments = json.RawMessage("{}")
			}
			m.ToolCalls[i] = tc
		}
		out = append(out, m)
		for i, tc := range orig {
			if tc.ID == "" {
				continue
			}
			if q := results[tc.ID]; len(q) > 0 {
				r := q[0]
				results[tc.ID] = q[1:]
				if strings.TrimSpace(tc.Name) == "" && strings.TrimSpace(r.Name) == "" {
					r.Name = m.ToolCalls[i].Name
				}
				out = append(out, r)
				continue
			}
			text := DanglingInterruptedText
			if strings.TrimSpace(tc.Name) == "" {
				text = DanglingEmptyNameText
			}
			out = append(out, model.Message{Role: model.RoleTool, Content: text, ToolCallID: tc.ID,
				Name: m.ToolCalls[i].Name, Status: "error"})
			n++
		}
	}
	return out, n
}

// wellFormed reports whether every tool call has an id, a name and
// object arguments and is answered right after its assistant message, and
// every tool result answers the calls just before it: the common case,
// checked without allocating.
func wellFormed(msgs []model.Message) bool {
	return wellFormedFrom(msgs, 0)
}

// wellFormedFrom is wellFormed for msgs whose messages before from (a
// boundary: not inside an assistant message's tool results) are known to
// be well formed.
func wellFormedFrom(msgs []model.Message, from int) bool {
	for i := from; i < len(msgs); i++ {
		m := &msgs[i]
		if m.Role == model.RoleTool {
			return false // a result not directly after its call
		}
		if m.Role != model.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		k := len(m.ToolCalls)
		if i+k >= len(msgs) {
			return false
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" || strings.TrimSpace(tc.Name) == "" || !isJSONObjectBytes(tc.Arguments) {
				return false
			}
			found := false
			for j := i + 1; j <= i+k; j++ {
				if msgs[j].Role == model.RoleTool && msgs[j].ToolCallID == tc.ID {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		i += k
	}
	return true
}

func isJSONObjectBytes(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

func normalizeToolName(name string) string {
	if n := strings.TrimSpace(name); n != "" {
		return n
	}
	return unknownToolName
}

// relabelToolCallIDs gives calls without an id a synthetic id derived
// from their position, and re-points their results when the pairing is
// forced: one compatible call, or several whose turn answered every call
// (then results pair by position).
func relabelToolCallIDs(msgs []model.Message) []model.Message {
	type open struct{ synthetic, name string }
	var out []model.Message
	var pending []open
	positional := false
	for idx, m := range msgs {
		switch {
		case m.Role == model.RoleAssistant:
			pending = pending[:0]
			changed := false
			for pos, tc := range m.ToolCalls {
				if strings.TrimSpace(tc.ID) != "" {
					continue
				}
				if !changed {
					m.ToolCalls = append([]model.ToolCall(nil), m.ToolCalls...)
					changed = true
				}
				syn := fmt.Sprintf("%s%d_call_%d", syntheticIDPrefix, idx, pos)
				m.ToolCalls[pos].ID = syn
				pending = append(pending, open{syn, tc.Name})
			}
			if changed {
				out = cloneOnce(out, msgs)
				out[idx] = m
				unanswered := 0
				for _, r := range msgs[idx+1:] {
					if r.Role == model.RoleAssistant {
						break
					}
					if r.Role == model.RoleTool && strings.TrimSpace(r.ToolCallID) == "" {
						unanswered++
					}
				}
				positional = unanswered == len(pending)
			}
		case m.Role == model.RoleTool && strings.TrimSpace(m.ToolCallID) == "":
			var cand []int
			for i, p := range pending {
				if namesCanPair(p.name, m.Name) {
					cand = append(cand, i)
				}
			}
			if len(cand) == 0 || (len(cand) > 1 && !positional) {
				continue
			}
			m.ToolCallID = pending[cand[0]].synthetic
			pending = append(pending[:cand[0]], pending[cand[0]+1:]...)
			out = cloneOnce(out, msgs)
			out[idx] = m
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

func cloneOnce(out, msgs []model.Message) []model.Message {
	if out != nil {
		return out
	}
	return append([]model.Message(nil), msgs...)
}

func namesCanPair(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	return a == "" || b == "" || a == b
}
