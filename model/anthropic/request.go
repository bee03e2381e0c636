package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/antlerhq/antler/model"
)

// signatureKey is the Message.Meta key under which the signature of the
// model's thinking is kept, so the thinking can be echoed back with the
// tool results (the API requires it, unchanged).
const signatureKey = "anthropic_thinking_signature"

// params shapes req into a Messages API request.
func (m *Model) params(req *model.Request) (sdk.MessageNewParams, error) {
	maxTokens := DefaultMaxTokens
	if m.opts.MaxTokens > 0 {
		maxTokens = m.opts.MaxTokens
	}
	if req.MaxTokens > 0 {
		maxTokens = req.MaxTokens
	}
	p := sdk.MessageNewParams{Model: sdk.Model(m.opts.Model), MaxTokens: int64(maxTokens)}
	system, msgs, err := messages(req.Messages)
	if err != nil {
		return p, err
	}
	p.System = system
	p.Messages = msgs
	tools, err := tools(req.Tools)
	if err != nil {
		return p, err
	}
	if req.ProviderToolSearch != "" {
		search, ok := searchTool(req.ProviderToolSearch)
		if !ok {
			return p, fmt.Errorf("unknown tool search variant %q (want %q or %q)", req.ProviderToolSearch, model.ToolSearchRegex, model.ToolSearchBM25)
		}
		tools = append(tools, search)
	}
	p.Tools = tools
	extra := map[string]any{}
	// This SDK version has no temperature field; it is sent as an extra
	// body field with the same name.
	switch {
	case req.Temperature != nil:
		extra["temperature"] = *req.Temperature
	case m.opts.Temperature != nil:
		extra["temperature"] = *m.opts.Temperature
	}
	maps.Copy(extra, m.opts.ExtraBody)
	if m.opts.SupportsThinking {
		src := m.opts.NoThinkingBody
		if req.Thinking {
			src = m.opts.ThinkingBody
		}
		maps.Copy(extra, src)
	}
	if len(extra) > 0 {
		p.SetExtraFields(extra)
	}
	return p, nil
}

// messages splits off the system prompt and converts the rest. Tool
// results go into user messages; consecutive user-side content (tool
// results, then a user message) is merged into one message, as the API
// wants strictly alternating roles.
func messages(in []model.Message) ([]sdk.TextBlockParam, []sdk.MessageParam, error) {
	var system []sdk.TextBlockParam
	var out []sdk.MessageParam
	appendUser := func(blocks ...sdk.ContentBlockParamUnion) {
		if n := len(out); n > 0 && out[n-1].OfUser != nil {
			out[n-1].OfUser.Content = append(out[n-1].OfUser.Content, blocks...)
			return
		}
		out = append(out, sdk.NewUserMessage(blocks...))
	}
	for i, msg := range in {
		if msg.Remove {
			continue
		}
		switch msg.Role {
		case model.RoleSystem:
			if text := msg.Text(); text != "" {
				system = append(system, sdk.TextBlockParam{Text: text})
			}
		case model.RoleUser:
			blocks := userBlocks(msg)
			if len(blocks) == 0 {
				continue // the API rejects empty content
			}
			appendUser(blocks...)
		case model.RoleAssistant:
			blocks := assistantBlocks(msg)
			if len(blocks) == 0 {
				continue // the API rejects empty assistant turns
			}
			out = append(out, sdk.NewAssistantMessage(blocks...))
		case model.RoleTool:
			tr := sdk.ToolResultBlockParam{ToolUseID: msg.ToolCallID}
			if text := msg.Text(); text != "" {
				tr.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: text}}}
			}
			for _, p := range msg.Parts {
				if p.Type == model.PartImage {
					img := sdk.NewImageBlockBase64(p.MIMEType, base64.StdEncoding.EncodeToString(p.Data))
					tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfImage: img.OfImage})
				}
			}
			if msg.Status == "error" {
				tr.IsError = sdk.Bool(true)
			}
			appendUser(sdk.ContentBlockParamUnion{OfToolResult: &tr})
		default:
			return nil, nil, fmt.Errorf("message %d has unknown role %q", i, msg.Role)
		}
	}
	return system, out, nil
}

func userBlocks(msg model.Message) []sdk.ContentBlockParamUnion {
	var blocks []sdk.ContentBlockParamUnion
	if msg.Content != "" {
		blocks = append(blocks, sdk.NewTextBlock(msg.Content))
	}
	for _, p := range msg.Parts {
		switch p.Type {
		case model.PartText:
			if p.Text != "" {
				blocks = append(blocks, sdk.NewTextBlock(p.Text))
			}
		case model.PartImage:
			blocks = append(blocks, sdk.NewImageBlockBase64(p.MIMEType, base64.StdEncoding.EncodeToString(p.Data)))
		}
	}
	return blocks
}

func assistantBlocks(msg model.Message) []sdk.ContentBlockParamUnion {
	var blocks []sdk.ContentBlockParamUnion
	if sig, _ := msg.Meta[signatureKey].(string); sig != "" && msg.Reasoning != "" {
		blocks = append(blocks, sdk.NewThinkingBlock(sig, msg.Reasoning))
	}
	blocks = append(blocks, serverBlockParams(msg)...)
	if text := msg.Text(); text != "" {
		blocks = append(blocks, sdk.NewTextBlock(text))
	}
	for _, tc := range msg.ToolCalls {
		input := json.RawMessage(tc.Arguments)
		if len(input) == 0 || !json.Valid(input) || input[0] != '{' {
			input = json.RawMessage("{}")
		}
		blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, input, tc.Name))
	}
	return blocks
}

// tools converts tool definitions; the schema's properties and required
// list map to their fields, every other key is passed through.
func tools(defs []model.ToolDefinition) ([]sdk.ToolUnionParam, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	out := make([]sdk.ToolUnionParam, 0, len(defs))
	for _, d := range defs {
		schema := map[string]any{}
		if len(d.InputSchema) > 0 && string(d.InputSchema) != "null" {
			if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
				return nil, fmt.Errorf("tool %q: input schema is not a JSON object: %w", d.Name, err)
			}
		}
		in := sdk.ToolInputSchemaParam{Properties: schema["properties"]}
		if in.Properties == nil {
			in.Properties = map[string]any{}
		}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					in.Required = append(in.Required, s)
				}
			}
		}
		delete(schema, "type")
		delete(schema, "properties")
		delete(schema, "required")
		if len(schema) > 0 {
			in.ExtraFields = schema
		}
		t := sdk.ToolParam{Name: d.Name, InputSchema: in}
		if d.Description != "" {
			t.Description = sdk.String(d.Description)
		}
		if d.DeferLoading {
			t.DeferLoading = sdk.Bool(true)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: &t})
	}
	return out, nil
}
