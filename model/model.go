package model

import (
	"context"
	"encoding/json"
	"iter"
)

// ToolDefinition is a tool as a model sees it: name, description and the
// JSON Schema of its arguments.
type ToolDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// DeferLoading asks a provider with its own tool search
	// (Request.ProviderToolSearch) to keep the definition out of the
	// model's context until its search returns the tool.
	DeferLoading bool `json:"defer_loading,omitempty"`
}

// Request is one call to a chat model.
type Request struct {
	// Messages is the whole conversation, system messages first.
	Messages []Message
	// Tools are the tools the model may call; nil binds none.
	Tools []ToolDefinition
	// MaxTokens, when positive, overrides the provider's configured limit.
	MaxTokens int
	// Temperature, when non-nil, overrides the configured temperature.
	Temperature *float64
	// Thinking asks a model that supports it to think before answering.
	Thinking bool
	// ProviderToolSearch asks a model that implements [ToolSearcher] to
	// add the provider's own tool search over the tools marked
	// DeferLoading: ToolSearchRegex or ToolSearchBM25; "" adds none.
	ProviderToolSearch string
}

// Clone returns a copy of r whose slices may be modified without
// affecting r. Messages themselves are shared.
func (r *Request) Clone() *Request {
	c := *r
	c.Messages = append([]Message(nil), r.Messages...)
	c.Tools = append([]ToolDefinition(nil), r.Tools...)
	return &c
}

// FinishReason says why a model stopped.
type FinishReason string

// Finish reasons, normalised across providers.
const (
	FinishStop      FinishReason = "stop"
	FinishToolCalls FinishReason = "tool_calls"
	FinishLength    FinishReason = "length"
	FinishSafety    FinishReason = "content_filter"
)

// The keys of Response.Metadata that providers set.
const (
	// MetaFinishReason is the finish_reason of a chat-completions
	// response as the server sent it ("content_filter", "SAFETY", ...).
	MetaFinishReason = "finish_reason"
	// MetaStopReason is the stop_reason of an Anthropic response as the
	// API sent it ("refusal", "end_turn", ...).
	MetaStopReason = "stop_reason"
	// MetaContentFilterResults is the content_filter_results object
	// Azure OpenAI attaches to a filtered choice.
	MetaContentFilterResults = "content_filter_results"
)

// Response is a model's complete answer to a Request.
type Response struct {
	// Message is the assistant message, with its tool calls.
	Message Message
	Usage   Usage
	// FinishReason is the provider's reason normalised; a response with
	// tool calls always has FinishToolCalls.
	FinishReason FinishReason
	// Metadata is the provider's own account of the response, not
	// normalised (LangChain's response_metadata): MetaFinishReason or
	// MetaStopReason, and MetaContentFilterResults when sent. It is not
	// stored with the message. nil when the provider says nothing.
	Metadata map[string]any
}

// Event is one streamed piece of a response. Exactly one of the fields
// is set; the last event of a successful stream has Response set.
type Event struct {
	TextDelta      string
	ReasoningDelta string
	// ToolCallDelta reports a tool call as it starts streaming (Name set
	// on the first delta for an index) and its argument fragments.
	ToolCallDelta *ToolCallDelta
	Response      *Response
}

// ToolCallDelta is a streamed fragment of a tool call.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// ChatModel is a chat model that streams its answer and can call tools.
//
// Generate yields events as they arrive; the final event carries the
// complete Response. A provider failure is yielded as an error and ends
// the sequence. Breaking out of the loop cancels the request.
type ChatModel interface {
	Generate(ctx context.Context, req *Request) iter.Seq2[Event, error]
}

// Collect runs Generate to completion and returns the final response,
// calling onEvent (if non-nil) for every event on the way.
func Collect(ctx context.Context, m ChatModel, req *Request, onEvent func(Event)) (*Response, error) {
	var final *Response
	for ev, err := range m.Generate(ctx, req) {
		if err != nil {
			return nil, err
		}
		if onEvent != nil {
			onEvent(ev)
		}
		if ev.Response != nil {
			final = ev.Response
		}
	}
	if final == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNoResponse
	}
	return final, nil
}
