package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/antlerhq/antler/model"
)

// params shapes req into a chat-completions request.
func (m *Model) params(req *model.Request) (*chatRequest, error) {
	p := &chatRequest{
		Model:         m.opts.Model,
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
	}
	in := req.Messages
	if m.opts.TextToolCalls {
		in = textConversation(in)
	}
	msgs, err := messages(in, m.opts.EchoReasoning)
	if err != nil {
		return nil, err
	}
	p.Messages = msgs
	tools, err := tools(req.Tools)
	if err != nil {
		return nil, err
	}
	p.Tools = tools

	if n := cmpPositive(req.MaxTokens, m.opts.MaxTokens); n > 0 {
		if m.opts.UseMaxCompletionTokens {
			p.MaxCompletionTokens = &n
		} else {
			p.MaxTokens = &n
		}
	}
	switch {
	case req.Temperature != nil:
		t := *req.Temperature
		p.Temperature = &t
	case m.opts.Temperature != nil:
		t := *m.opts.Temperature
		p.Temperature = &t
	}

	extra := maps.Clone(m.opts.ExtraBody)
	if m.opts.SupportsThinking {
		if req.Thinking {
			extra = merge(extra, m.opts.ThinkingBody)
		} else {
			extra = merge(extra, m.opts.NoThinkingBody)
		}
	}
	p.extra = extra
	return p, nil
}

func cmpPositive(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

func merge(dst, src map[string]any) map[string]any {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]any{}
	}
	maps.Copy(dst, src)
	return dst
}

// messages converts Antler messages to chat-completions messages.
func messages(in []model.Message, echoReasoning bool) ([]chatMessage, error) {
	out := make([]chatMessage, 0, len(in))
	for i, msg := range in {
		if msg.Remove {
			continue
		}
		switch msg.Role {
		case model.RoleSystem:
			out = append(out, chatMessage{Role: "system", Content: msg.Content})
		case model.RoleUser:
			out = append(out, userMessage(msg))
		case model.RoleAssistant:
			out = append(out, assistantMessage(msg, echoReasoning))
		case model.RoleTool:
			out = append(out, chatMessage{Role: "tool", Content: msg.Text(), ToolCallID: msg.ToolCallID})
		default:
			return nil, fmt.Errorf("message %d has unknown role %q", i, msg.Role)
		}
	}
	return out, nil
}

func userMessage(msg model.Message) chatMessage {
	if len(msg.Parts) == 0 {
		return chatMessage{Role: "user", Content: msg.Content}
	}
	parts := make([]contentPart, 0, len(msg.Parts)+1)
	if msg.Content != "" {
		parts = append(parts, contentPart{Type: "text", Text: msg.Content})
	}
	for _, p := range msg.Parts {
		switch p.Type {
		case model.PartText:
			parts = append(parts, contentPart{Type: "text", Text: p.Text})
		case model.PartImage:
			parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{URL: dataURL(p.MIMEType, p.Data)}})
		}
	}
	return chatMessage{Role: "user", Content: parts}
}

// dataURL returns data as a base64 data URL, the form chat-completions
// accepts for inline images.
func dataURL(mimeType string, data []byte) string {
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	return "data:" + mimeType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

func assistantMessage(msg model.Message, echoReasoning bool) chatMessage {
	a := chatMessage{Role: "assistant"}
	if text := msg.Text(); text != "" || len(msg.ToolCalls) == 0 {
		a.Content = text
	}
	for _, tc := range msg.ToolCalls {
		args := string(tc.Arguments)
		if args == "" {
			args = "{}"
		}
		// Gemini behind a gateway rejects a later turn whose call lost
		// the signature it came with, hence ThoughtSignature.
		a.ToolCalls = append(a.ToolCalls, chatToolCall{ID: tc.ID, Type: "function",
			Function: functionCall{Name: tc.Name, Arguments: args}, ThoughtSignature: tc.Signature})
	}
	if echoReasoning {
		a.ReasoningContent = msg.Reasoning
	}
	return a
}

// tools converts tool definitions to function tools.
func tools(defs []model.ToolDefinition) ([]chatTool, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	out := make([]chatTool, 0, len(defs))
	for _, d := range defs {
		params := map[string]any{"type": "object", "properties": map[string]any{}}
		if len(d.InputSchema) > 0 && string(d.InputSchema) != "null" {
			params = nil
			if err := json.Unmarshal(d.InputSchema, &params); err != nil {
				return nil, fmt.Errorf("tool %q: input schema is not a JSON object: %w", d.Name, err)
			}
		}
		out = append(out, chatTool{Type: "function", Function: functionDef{Name: d.Name, Description: d.Description, Parameters: params}})
	}
	return out, nil
}
