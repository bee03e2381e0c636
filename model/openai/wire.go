package openai

import (
	"encoding/json"
	"maps"
)

// The chat-completions wire format, as much of it as Antler sends and
// reads. Fields that only some compatible servers send (reasoning,
// thought signatures, content-filter results) are kept raw and decoded
// leniently, so a server that sends them in another shape does not
// break the whole chunk.

// chatRequest is the body of POST /chat/completions.
type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	Tools               []chatTool     `json:"tools,omitempty"`
	Stream              bool           `json:"stream,omitempty"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	MaxTokens           *int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int           `json:"max_completion_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`

	// extra is merged into the encoded body; its keys override the
	// fields above (Options.ExtraBody and the thinking bodies).
	extra map[string]any
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// encode returns the request's JSON with extra merged in.
func (r *chatRequest) encode() ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil || len(r.extra) == 0 {
		return b, err
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	maps.Copy(fields, r.extra)
	return json.Marshal(fields)
}

// chatMessage is one message of the conversation. Content is a string,
// a []contentPart (a user message with images) or nil (an assistant
// message that only calls tools).
type chatMessage struct {
	Role             string         `json:"role"`
	Content          any            `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

// chatToolCall is a call an assistant message made, as sent back.
type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
	// ThoughtSignature is echoed for Gemini behind a gateway.
	ThoughtSignature string `json:"thought_signature,omitempty"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string      `json:"type"`
	Function functionDef `json:"function"`
}

type functionDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// chatChunk is one streamed chat.completion.chunk.
type chatChunk struct {
	Choices []chunkChoice `json:"choices"`
	Usage   *usage        `json:"usage"`
}

type chunkChoice struct {
	Index        int64      `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason string     `json:"finish_reason"`
	// ContentFilterResults is Azure's per-choice moderation verdict.
	ContentFilterResults json.RawMessage `json:"content_filter_results"`
}

type chunkDelta struct {
	Content   string          `json:"content"`
	ToolCalls []deltaToolCall `json:"tool_calls"`
	reasoningFields
}

// reasoningFields are the non-standard places compatible servers put
// a message's reasoning.
type reasoningFields struct {
	// ReasoningContent is DeepSeek's, MiMo's and vLLM's field.
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	// Reasoning is Ollama's and StepFun's field.
	Reasoning json.RawMessage `json:"reasoning"`
	// ReasoningDetails is MiniMax's array (reasoning_split).
	ReasoningDetails json.RawMessage `json:"reasoning_details"`
}

type deltaToolCall struct {
	Index    int64        `json:"index"`
	ID       string       `json:"id"`
	Function functionCall `json:"function"`
	signatureFields
}

// signatureFields are the two spellings of a Gemini thought signature.
type signatureFields struct {
	ThoughtSignature      json.RawMessage `json:"thought_signature"`
	ThoughtSignatureCamel json.RawMessage `json:"thoughtSignature"`
}

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// chatCompletion is a whole (not streamed) answer.
type chatCompletion struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				ID       string       `json:"id"`
				Function functionCall `json:"function"`
			} `json:"tool_calls"`
			reasoningFields
		} `json:"message"`
	} `json:"choices"`
	Usage usage `json:"usage"`
}

// errorBody is the API's error object, in an error answer or an error
// frame of a stream.
type errorBody struct {
	Error *struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
	} `json:"error"`
}

// rawString returns raw as a string when it is a non-empty JSON string,
// else "".
func rawString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
