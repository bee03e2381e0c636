package model

import (
	"encoding/json"
	"strings"
)

// Role is who authored a message.
type Role string

// The message roles, as in LangChain's message classes.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// RemoveAllID is the message id of a removal marker that clears every
// message before it (LangGraph's REMOVE_ALL_MESSAGES).
const RemoveAllID = "__remove_all__"

// Message is one message of a conversation. It mirrors the shape of a
// LangChain message so that thread state round-trips through DeerFlow's
// frontend unchanged.
type Message struct {
	// ID identifies the message within its thread; the messages reducer
	// replaces a message with the same ID instead of appending.
	ID   string `json:"id,omitempty"`
	Role Role   `json:"role"`
	// Content is the plain text of the message.
	Content string `json:"content"`
	// Parts carries non-text content (images) sent to the model. It is
	// never persisted for injected images (see builtin view_image).
	Parts []Part `json:"parts,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and Name identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
	// Status is "error" for a tool message that reports a failure.
	Status string `json:"status,omitempty"`
	// Artifact is data attached to a tool message that the model never
	// sees (LangChain's ToolMessage.artifact).
	Artifact any `json:"artifact,omitempty"`
	// Reasoning is the model's visible reasoning text, when it has any.
	Reasoning string `json:"reasoning,omitempty"`
	// Meta is free-form metadata (LangChain's additional_kwargs).
	Meta map[string]any `json:"meta,omitempty"`
	// Usage is the token usage of the response that produced an
	// assistant message.
	Usage *Usage `json:"usage,omitempty"`
	// Remove marks a removal instruction for the messages reducer: the
	// message with ID is deleted (or all messages, for RemoveAllID).
	Remove bool `json:"remove,omitempty"`
}

// PartType tells which field of a Part is set.
type PartType string

// The part types.
const (
	PartText  PartType = "text"
	PartImage PartType = "image"
)

// Part is a piece of multimodal content.
type Part struct {
	Type     PartType `json:"type"`
	Text     string   `json:"text,omitempty"`
	MIMEType string   `json:"mime_type,omitempty"`
	// Data is the raw image bytes (base64 in JSON).
	Data []byte `json:"data,omitempty"`
}

// ToolCall is a model's request to call one tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Signature is the opaque thought signature Gemini attaches to a
	// call made while thinking (natively or through an OpenAI-compatible
	// gateway); the provider sends it back with the call on later turns,
	// as the API requires. "" for every other provider.
	Signature string `json:"signature,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:  u.InputTokens + o.InputTokens,
		OutputTokens: u.OutputTokens + o.OutputTokens,
		TotalTokens:  u.TotalTokens + o.TotalTokens,
	}
}

// Text returns a user message with the given text.
func UserText(text string) Message { return Message{Role: RoleUser, Content: text} }

// SystemText returns a system message with the given text.
func SystemText(text string) Message { return Message{Role: RoleSystem, Content: text} }

// Text is the message's content and its text parts joined by newlines,
// empty ones left out: what a reader (a title, a one-shot answer, a
// provider without content parts) takes as the message's text.
func (m Message) Text() string {
	var b strings.Builder
	b.WriteString(m.Content)
	for _, p := range m.Parts {
		if p.Type == PartText && p.Text != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
