package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"

	oai "github.com/openai/openai-go/v3"

	"github.com/antlerhq/antler/model"
)

// params shapes req into a chat-completions request.
func (m *Model) params(req *model.Request) (oai.ChatCompletionNewParams, error) {
	p := oai.ChatCompletionNewParams{
		Model:         m.opts.Model,
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
	}
	in := req.Messages
	if m.opts.TextToolCalls {
		in = textConversation(in)
	}
	msgs, err := messages(in, m.opts.EchoReasoning)
	if err != nil {
		return p, err
	}
	p.Messages = msgs
	tools, err := tools(req.Tools)
	if err != nil {
		return p, err
	}
	p.Tools = tools

	if n := cmpPositive(req.MaxTokens, m.opts.MaxTokens); n > 0 {
		if m.opts.UseMaxCompletionTokens {
			p.MaxCompletionTokens = oai.Int(int64(n))
		} else {
			p.MaxTokens = oai.Int(int64(n))
		}
	}
	switch {
	case req.Temperature != nil:
		p.Temperature = oai.Float(*req.Temperature)
	case m.opts.Temperature != nil:
		p.Temperature = oai.Float(*m.opts.Temperature)
	}

	extra := maps.Clone(m.opts.ExtraBody)
	if m.opts.SupportsThinking {
		if req.Thinking {
			extra = merge(extra, m.opts.ThinkingBody)
		} else {
			extra = merge(extra, m.opts.NoThinkingBody)
		}
	}
	if len(extra) > 0 {
		p.SetExtraFields(extra)
	}
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
func messages(in []model.Message, echoReasoning bool) ([]oai.ChatCompletionMessageParamUnion, error) {
	out := make([]oai.ChatCompletionMessageParamUnion, 0, len(in))
	for i, msg := range in {
		if msg.Remove {
			continue
		}
		switch msg.Role {
		case model.RoleSystem:
			out = append(out, oai.SystemMessage(msg.Content))
		case model.RoleUser:
			out = append(out, userMessage(msg))
		case model.RoleAssistant:
			out = append(out, assistantMessage(msg, echoReasoning))
		case model.RoleTool:
			out = append(out, oai.ToolMessage(textOf(msg), msg.ToolCallID))
		default:
			return nil, fmt.Errorf("message %d has unknown role %q", i, msg.Role)
		}
	}
	return out, nil
}

// textOf joins a message's content and its text parts.
func textOf(msg model.Message) string {
	s := msg.Content
	for _, p := range msg.Parts {
		if p.Type == model.PartText && p.Text != "" {
			if s != "" {
				s += "\n"
			}
			s += p.Text
		}
	}
	return s
}

func userMessage(msg model.Message) oai.ChatCompletionMessageParamUnion {
	if len(msg.Parts) == 0 {
		return oai.UserMessage(msg.Content)
	}
	parts := make([]oai.ChatCompletionContentPartUnionParam, 0, len(msg.Parts)+1)
	if msg.Content != "" {
		parts = append(parts, oai.TextContentPart(msg.Content))
	}
	for _, p := range msg.Parts {
		switch p.Type {
		case model.PartText:
			parts = append(parts, oai.TextContentPart(p.Text))
		case model.PartImage:
			parts = append(parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{
				URL: dataURL(p.MIMEType, p.Data),
			}))
		}
	}
	return oai.UserMessage(parts)
}

// dataURL returns data as a base64 data URL, the form chat-completions
// accepts for inline images.
func dataURL(mimeType string, data []byte) string {
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	return "data:" + mimeType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

func assistantMessage(msg model.Message, echoReasoning bool) oai.ChatCompletionMessageParamUnion {
	a := oai.ChatCompletionAssistantMessageParam{}
	if text := textOf(msg); text != "" || len(msg.ToolCalls) == 0 {
		a.Content.OfString = oai.String(text)
	}
	for _, tc := range msg.ToolCalls {
		args := string(tc.Arguments)
		if args == "" {
			args = "{}"
		}
		call := &oai.ChatCompletionMessageFunctionToolCallParam{
			ID:       tc.ID,
			Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
		}
		if tc.Signature != "" {
			// Gemini behind a gateway rejects a later turn whose call
			// lost the signature it came with.
			call.SetExtraFields(map[string]any{"thought_signature": tc.Signature})
		}
		a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{OfFunction: call})
	}
	if echoReasoning && msg.Reasoning != "" {
		a.SetExtraFields(map[string]any{"reasoning_content": msg.Reasoning})
	}
	return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// tools converts tool definitions to function tools.
func tools(defs []model.ToolDefinition) ([]oai.ChatCompletionToolUnionParam, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	out := make([]oai.ChatCompletionToolUnionParam, 0, len(defs))
	for _, d := range defs {
		params := oai.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(d.InputSchema) > 0 && string(d.InputSchema) != "null" {
			params = nil
			if err := json.Unmarshal(d.InputSchema, &params); err != nil {
				return nil, fmt.Errorf("tool %q: input schema is not a JSON object: %w", d.Name, err)
			}
		}
		fn := oai.FunctionDefinitionParam{Name: d.Name, Parameters: params}
		if d.Description != "" {
			fn.Description = oai.String(d.Description)
		}
		out = append(out, oai.ChatCompletionFunctionTool(fn))
	}
	return out, nil
}
