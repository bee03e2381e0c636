package gateway

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/antlerhq/antler/model"
)

// LangChain message types (the "type" of a message dict).
const (
	typeHuman  = "human"
	typeAI     = "ai"
	typeTool   = "tool"
	typeSystem = "system"
	typeRemove = "remove"
)

// reasoningKey is where LangChain keeps an AI message's reasoning.
const reasoningKey = "reasoning_content"

// messageDict converts a message to LangChain's dict shape (Python's
// model_dump()), as DeerFlow's frontend reads it in values, history and
// messages/page: type, id, content, additional_kwargs, response_metadata,
// name, and per type tool_calls, tool_call_id, status and artifact.
//
// Image parts become image_url blocks with data URLs, except on messages
// marked hide_from_ui, whose images are dropped (DeerFlow never ships
// those payloads to the browser).
func messageDict(m model.Message) map[string]any {
	if m.Remove {
		return map[string]any{"type": typeRemove, "id": m.ID}
	}
	kwargs := maps.Clone(m.Meta)
	if kwargs == nil {
		kwargs = map[string]any{}
	}
	if m.Reasoning != "" {
		kwargs[reasoningKey] = m.Reasoning
	}
	d := map[string]any{
		"id":                nilIfEmpty(m.ID),
		"content":           contentOf(m, kwargs),
		"additional_kwargs": kwargs,
		"response_metadata": map[string]any{},
		"name":              nilIfEmpty(m.Name),
	}
	switch m.Role {
	case model.RoleUser:
		d["type"] = typeHuman
		d["example"] = false
	case model.RoleAssistant:
		d["type"] = typeAI
		d["example"] = false
		calls := make([]map[string]any, 0, len(m.ToolCalls))
		for _, tc := range m.ToolCalls {
			calls = append(calls, map[string]any{"id": tc.ID, "name": tc.Name, "args": argsObject(tc.Arguments), "type": "tool_call"})
		}
		d["tool_calls"] = calls
		d["invalid_tool_calls"] = []any{}
		if m.Usage != nil {
			d["usage_metadata"] = usageDict(*m.Usage)
		} else {
			d["usage_metadata"] = nil
		}
	case model.RoleTool:
		d["type"] = typeTool
		d["tool_call_id"] = m.ToolCallID
		status := m.Status
		if status == "" {
			status = "success"
		}
		d["status"] = status
		d["artifact"] = m.Artifact
	case model.RoleSystem:
		d["type"] = typeSystem
	default:
		d["type"] = string(m.Role)
	}
	return d
}

func usageDict(u model.Usage) map[string]any {
	return map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens, "total_tokens": u.TotalTokens}
}

// contentOf is the dict's content: the text, or a list of blocks when the
// message carries images.
func contentOf(m model.Message, kwargs map[string]any) any {
	hidden, _ := kwargs["hide_from_ui"].(bool)
	var blocks []any
	for _, p := range m.Parts {
		switch p.Type {
		case model.PartImage:
			if hidden || len(p.Data) == 0 {
				continue
			}
			url := "data:" + p.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
			blocks = append(blocks, map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}})
		case model.PartText:
			blocks = append(blocks, map[string]any{"type": "text", "text": p.Text})
		}
	}
	if len(blocks) == 0 {
		return m.Content
	}
	if m.Content != "" {
		blocks = append([]any{map[string]any{"type": "text", "text": m.Content}}, blocks...)
	}
	return blocks
}

// argsObject decodes tool-call arguments into the object LangChain keeps
// in tool_calls[].args; arguments that are not a JSON object are kept as
// their text under "__raw".
func argsObject(raw json.RawMessage) map[string]any {
	out := map[string]any{}
	if len(raw) == 0 {
		return out
	}
	if err := json.Unmarshal(raw, &out); err != nil || out == nil {
		return map[string]any{"__raw": string(raw)}
	}
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// inputMessage is a message dict as clients send it in a run's input.
type inputMessage struct {
	Type             string          `json:"type"`
	Role             string          `json:"role"` // OpenAI-style alternative to type
	ID               string          `json:"id"`
	Content          json.RawMessage `json:"content"`
	Name             string          `json:"name"`
	AdditionalKwargs map[string]any  `json:"additional_kwargs"`
	ToolCallID       string          `json:"tool_call_id"`
	ToolCalls        []struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"tool_calls"`
	Status   string `json:"status"`
	Artifact any    `json:"artifact"`
}

// errBadMessage is wrapped by parseMessage's errors.
var errBadMessage = errors.New("invalid message")

// parseMessage converts a LangChain message dict (or an OpenAI-style
// {role, content}) to a model.Message. Content may be a string or a list
// of blocks: text blocks are joined with newlines, image_url blocks with
// data URLs become image parts. additional_kwargs become Meta (with
// reasoning_content moved to Reasoning).
func parseMessage(data []byte) (model.Message, error) {
	var in inputMessage
	if err := json.Unmarshal(data, &in); err != nil {
		return model.Message{}, fmt.Errorf("%w: %v", errBadMessage, err)
	}
	kind := in.Type
	if kind == "" {
		kind = in.Role
	}
	var m model.Message
	switch strings.TrimSuffix(strings.ToLower(kind), "messagechunk") {
	case typeHuman, "user":
		m.Role = model.RoleUser
	case typeAI, "assistant":
		m.Role = model.RoleAssistant
	case typeTool:
		m.Role = model.RoleTool
	case typeSystem:
		m.Role = model.RoleSystem
	default:
		return model.Message{}, fmt.Errorf("%w: unknown message type %q", errBadMessage, kind)
	}
	m.ID, m.Name, m.ToolCallID, m.Artifact = in.ID, in.Name, in.ToolCallID, in.Artifact
	if in.Status == "error" {
		m.Status = "error"
	}
	text, parts, err := parseContent(in.Content)
	if err != nil {
		return model.Message{}, err
	}
	m.Content, m.Parts = text, parts
	if len(in.AdditionalKwargs) > 0 {
		m.Meta = maps.Clone(in.AdditionalKwargs)
		if r, ok := m.Meta[reasoningKey].(string); ok {
			m.Reasoning = r
			delete(m.Meta, reasoningKey)
		}
		if len(m.Meta) == 0 {
			m.Meta = nil
		}
	}
	for _, tc := range in.ToolCalls {
		args := tc.Args
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		m.ToolCalls = append(m.ToolCalls, model.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: args})
	}
	return m, nil
}

func parseContent(raw json.RawMessage) (string, []model.Part, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil, nil
	}
	var blocks []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		ImageURL json.RawMessage `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", nil, fmt.Errorf("%w: content must be a string or a list of blocks", errBadMessage)
	}
	var texts []string
	var parts []model.Part
	for _, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "image_url":
			if p, ok := imagePart(b.ImageURL); ok {
				parts = append(parts, p)
			}
		}
	}
	return strings.Join(texts, "\n"), parts, nil
}

// imagePart decodes an image_url block ({"url": "data:..."} or the bare
// string) when it holds a base64 data URL; remote URLs are not fetched.
func imagePart(raw json.RawMessage) (model.Part, bool) {
	var url string
	if err := json.Unmarshal(raw, &url); err != nil {
		var obj struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(raw, &obj) != nil {
			return model.Part{}, false
		}
		url = obj.URL
	}
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return model.Part{}, false
	}
	mime, data, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return model.Part{}, false
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return model.Part{}, false
	}
	return model.Part{Type: model.PartImage, MIMEType: mime, Data: b}, true
}
