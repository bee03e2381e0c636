package modeltest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/antlerhq/antler/model"
)

// The chat-completions wire format, as much of it as the double reads
// and writes.

type apiRequest struct {
	Model         string       `json:"model"`
	Messages      []apiMessage `json:"messages"`
	Tools         []apiTool    `json:"tools"`
	Stream        bool         `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
}

type apiMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content,omitempty"`
	ToolCalls        []apiToolCall   `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
	Name             string          `json:"name,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
}

type apiPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

type apiToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type apiTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type apiUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

type apiChunk struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []apiChunkChoice `json:"choices"`
	Usage   *apiUsage        `json:"usage,omitempty"`
}

type apiChunkChoice struct {
	Index        int      `json:"index"`
	Delta        apiDelta `json:"delta"`
	FinishReason *string  `json:"finish_reason"`
}

type apiDelta struct {
	Role             string        `json:"role,omitempty"`
	Content          *string       `json:"content,omitempty"`
	ReasoningContent string        `json:"reasoning_content,omitempty"`
	ToolCalls        []apiToolCall `json:"tool_calls,omitempty"`
}

type apiCompletion struct {
	ID      string      `json:"id"`
	Object  string      `json:"object"`
	Created int64       `json:"created"`
	Model   string      `json:"model"`
	Choices []apiChoice `json:"choices"`
	Usage   apiUsage    `json:"usage"`
}

type apiChoice struct {
	Index        int           `json:"index"`
	Message      apiOutMessage `json:"message"`
	FinishReason string        `json:"finish_reason"`
}

type apiOutMessage struct {
	Role             string        `json:"role"`
	Content          *string       `json:"content"`
	ReasoningContent string        `json:"reasoning_content,omitempty"`
	ToolCalls        []apiToolCall `json:"tool_calls,omitempty"`
}

type apiError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code,omitempty"`
	} `json:"error"`
}

// toRequest converts a decoded wire request into Antler's form.
func (r *apiRequest) toRequest() (*model.Request, error) {
	req := &model.Request{MaxTokens: max(r.MaxTokens, r.MaxCompletionTokens), Temperature: r.Temperature}
	for i, am := range r.Messages {
		msg := model.Message{Role: model.Role(am.Role), ToolCallID: am.ToolCallID, Name: am.Name, Reasoning: am.ReasoningContent}
		if err := decodeContent(am.Content, &msg); err != nil {
			return nil, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		for _, tc := range am.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{
				ID: tc.ID, Name: tc.Function.Name, Arguments: rawArgs(tc.Function.Arguments),
			})
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range r.Tools {
		req.Tools = append(req.Tools, model.ToolDefinition{
			Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters,
		})
	}
	return req, nil
}

func rawArgs(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// decodeContent reads a string content or an array of parts: text parts
// are joined into Content, images become Parts.
func decodeContent(raw json.RawMessage, msg *model.Message) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		return json.Unmarshal(raw, &msg.Content)
	}
	var parts []apiPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return err
	}
	var texts []string
	for _, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "image_url":
			part, err := decodeDataURL(p.ImageURL.URL)
			if err != nil {
				return err
			}
			msg.Parts = append(msg.Parts, part)
		default:
			return fmt.Errorf("unknown content part type %q", p.Type)
		}
	}
	msg.Content = strings.Join(texts, "\n")
	return nil
}

func decodeDataURL(u string) (model.Part, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return model.Part{Type: model.PartImage, Text: u}, nil // a remote URL, kept as text
	}
	meta, data, ok := strings.Cut(rest, ",")
	mime, isB64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isB64 {
		return model.Part{}, fmt.Errorf("image_url is not a base64 data URL")
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return model.Part{}, fmt.Errorf("image_url: %w", err)
	}
	return model.Part{Type: model.PartImage, MIMEType: mime, Data: b}, nil
}
