package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/antlerhq/antler/model"
)

// Turn is one scripted model answer. The zero Turn answers with empty
// text.
//
// In JSON, Delay and ChunkDelay are Go duration strings ("150ms") or
// numbers of milliseconds, and a tool call's arguments may be an object
// or a string holding JSON. Func has no JSON form.
type Turn struct {
	// Text is the answer's text, streamed in pieces of Script.ChunkSize.
	Text string `json:"text,omitempty"`
	// Reasoning is streamed before the text as reasoning deltas
	// (reasoning_content on the wire).
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls the answer asks for, streamed after the
	// text. An empty ID is filled in as "call_<n>_<i>", where n counts
	// model calls from 1 and i counts calls within the answer from 0.
	ToolCalls []model.ToolCall `json:"tool_calls,omitempty"`
	// FinishReason overrides the finish reason; "" = "tool_calls" when
	// there are tool calls, else "stop".
	FinishReason model.FinishReason `json:"finish_reason,omitempty"`
	// Usage overrides the token usage; nil = an estimate of a quarter
	// token per byte of input and output.
	Usage *model.Usage `json:"usage,omitempty"`

	// Status, when non-zero, fails the call before anything is streamed:
	// the server answers with this HTTP status and an OpenAI error body
	// carrying Error; in process Generate yields a *model.ProviderError.
	Status int `json:"status,omitempty"`
	// Error, without Status, fails the call after the content has been
	// streamed: the server sends an SSE error event and no [DONE]; in
	// process Generate yields a *model.ProviderError.
	Error string `json:"error,omitempty"`
	// Disconnect drops the connection after the content, without
	// finish_reason or [DONE]; in process Generate yields a
	// *model.ProviderError wrapping io.ErrUnexpectedEOF.
	Disconnect bool `json:"disconnect,omitempty"`

	// Delay waits before the first event (time to first token). The
	// server sends its response headers first, so a client sees a
	// stream that is open but silent.
	Delay time.Duration `json:"-"`
	// ChunkDelay waits between streamed events.
	ChunkDelay time.Duration `json:"-"`

	// Func, when set, computes the turn from the request; the Turn it
	// returns is played instead (its own Func is ignored).
	Func func(req *model.Request) Turn `json:"-"`
}

// Rule answers requests that match it once the scripted turns have run
// out. All set conditions must hold; a Rule with none matches every
// request.
type Rule struct {
	// LastRole matches the role of the last message: "user", "tool",
	// "assistant" or "system".
	LastRole model.Role `json:"last_role,omitempty"`
	// Contains matches when the last message's content contains it.
	Contains string `json:"contains,omitempty"`
	// Tool matches when a tool of this name is bound.
	Tool string `json:"tool,omitempty"`
	// Reply is the answer. "{last}" in Reply.Text and in tool-call
	// arguments is replaced by the last message's content (JSON-escaped
	// in arguments, so it belongs inside a JSON string).
	Reply Turn `json:"reply"`
}

// Script is what a scripted model plays. Its JSON form:
//
//	{
//	  "turns": [
//	    {"text": "Let me look.", "tool_calls": [{"name": "ls", "arguments": {"path": "/mnt/user-data"}}]},
//	    {"text": "Done.", "delay": "50ms"}
//	  ],
//	  "rules": [
//	    {"last_role": "user", "reply": {"tool_calls": [{"name": "echo", "arguments": {"text": "{last}"}}]}},
//	    {"last_role": "tool", "reply": {"text": "tool said: {last}"}}
//	  ],
//	  "chunk_size": 8
//	}
type Script struct {
	// Turns are played in order, one per model call.
	Turns []Turn `json:"turns,omitempty"`
	// Rules answer calls after the turns have run out (or all calls when
	// there are no turns); the first matching rule wins. A call that no
	// rule matches fails: "modeltest: script exhausted ...".
	Rules []Rule `json:"rules,omitempty"`
	// Loop replays Turns from the start instead of running out.
	Loop bool `json:"loop,omitempty"`
	// ChunkSize splits text and reasoning into deltas of at most this
	// many bytes (never inside a UTF-8 sequence); 0 sends each whole.
	ChunkSize int `json:"chunk_size,omitempty"`
	// NoRecord stops recording requests, so long benchmarks and load
	// tests do not grow memory.
	NoRecord bool `json:"no_record,omitempty"`
	// APIKey, when set, makes the server require "Authorization: Bearer
	// <APIKey>" and answer 401 otherwise.
	APIKey string `json:"api_key,omitempty"`
}

// ParseScript decodes the JSON form of a Script. Unknown keys are
// errors.
func ParseScript(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("modeltest: script: %w", err)
	}
	return s, nil
}

// turnJSON is Turn's wire form.
type turnJSON struct {
	Text         string             `json:"text,omitempty"`
	Reasoning    string             `json:"reasoning,omitempty"`
	ToolCalls    []toolCallJSON     `json:"tool_calls,omitempty"`
	FinishReason model.FinishReason `json:"finish_reason,omitempty"`
	Usage        *model.Usage       `json:"usage,omitempty"`
	Status       int                `json:"status,omitempty"`
	Error        string             `json:"error,omitempty"`
	Disconnect   bool               `json:"disconnect,omitempty"`
	Delay        *duration          `json:"delay,omitempty"`
	ChunkDelay   *duration          `json:"chunk_delay,omitempty"`
}

type toolCallJSON struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Signature string          `json:"signature,omitempty"`
}

// MarshalJSON encodes the turn in its JSON form.
func (t Turn) MarshalJSON() ([]byte, error) {
	j := turnJSON{Text: t.Text, Reasoning: t.Reasoning, FinishReason: t.FinishReason, Usage: t.Usage,
		Status: t.Status, Error: t.Error, Disconnect: t.Disconnect}
	for _, tc := range t.ToolCalls {
		j.ToolCalls = append(j.ToolCalls, toolCallJSON(tc))
	}
	if t.Delay > 0 {
		d := duration(t.Delay)
		j.Delay = &d
	}
	if t.ChunkDelay > 0 {
		d := duration(t.ChunkDelay)
		j.ChunkDelay = &d
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes the turn's JSON form.
func (t *Turn) UnmarshalJSON(data []byte) error {
	var j turnJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*t = Turn{Text: j.Text, Reasoning: j.Reasoning, FinishReason: j.FinishReason, Usage: j.Usage,
		Status: j.Status, Error: j.Error, Disconnect: j.Disconnect}
	for _, tc := range j.ToolCalls {
		args, err := normaliseArgs(tc.Arguments)
		if err != nil {
			return fmt.Errorf("tool call %q: %w", tc.Name, err)
		}
		t.ToolCalls = append(t.ToolCalls, model.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: args})
	}
	if j.Delay != nil {
		t.Delay = time.Duration(*j.Delay)
	}
	if j.ChunkDelay != nil {
		t.ChunkDelay = time.Duration(*j.ChunkDelay)
	}
	return nil
}

// normaliseArgs accepts arguments as a JSON object or as a string that
// holds JSON, and returns the JSON.
func normaliseArgs(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if !json.Valid([]byte(s)) {
			// Deliberately malformed arguments are allowed: keep them.
			return raw, nil
		}
		return json.RawMessage(s), nil
	}
	return raw, nil
}

// duration is a time.Duration that reads "150ms" or a number of
// milliseconds.
type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *duration) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case float64:
		*d = duration(time.Duration(x * float64(time.Millisecond)))
	case string:
		p, err := time.ParseDuration(strings.TrimSpace(x))
		if err != nil {
			return err
		}
		*d = duration(p)
	default:
		return fmt.Errorf("duration must be a string like \"150ms\" or milliseconds, got %s", data)
	}
	return nil
}
