package gemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/antlerhq/antler/model"
)

// request shapes req into Gemini contents and a generation config.
func (m *Model) request(req *model.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	system, contents, err := conversation(req.Messages)
	if err != nil {
		return nil, nil, err
	}
	cfg := &genai.GenerateContentConfig{}
	if system != "" {
		cfg.SystemInstruction = genai.NewContentFromText(system, genai.RoleUser)
	}
	if n := req.MaxTokens; n > 0 {
		cfg.MaxOutputTokens = int32(n)
	} else if m.opts.MaxTokens > 0 {
		cfg.MaxOutputTokens = int32(m.opts.MaxTokens)
	}
	temp := m.opts.Temperature
	if req.Temperature != nil {
		temp = req.Temperature
	}
	cfg.Temperature, cfg.TopP, cfg.TopK = float32p(temp), float32p(m.opts.TopP), float32p(m.opts.TopK)

	th := m.opts.Thinking
	if m.opts.SupportsThinking {
		if req.Thinking {
			th = overlay(th, m.opts.ThinkingOn)
		} else {
			th = overlay(th, m.opts.ThinkingOff)
		}
	}
	cfg.ThinkingConfig = thinkingConfig(th)

	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, d := range req.Tools {
			fd := &genai.FunctionDeclaration{Name: d.Name, Description: d.Description}
			if len(d.InputSchema) > 0 && string(d.InputSchema) != "null" {
				var schema map[string]any
				if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
					return nil, nil, fmt.Errorf("tool %q: input schema is not a JSON object: %w", d.Name, err)
				}
				fd.ParametersJsonSchema = schema
			}
			decls = append(decls, fd)
		}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	return contents, cfg, nil
}

func float32p(f *float64) *float32 {
	if f == nil {
		return nil
	}
	v := float32(*f)
	return &v
}

// overlay returns base with the set fields of top.
func overlay(base, top Thinking) Thinking {
	if top.Budget != nil {
		base.Budget = top.Budget
	}
	if top.IncludeThoughts != nil {
		base.IncludeThoughts = top.IncludeThoughts
	}
	if top.Level != "" {
		base.Level = top.Level
	}
	return base
}

func thinkingConfig(th Thinking) *genai.ThinkingConfig {
	if th.Budget == nil && th.IncludeThoughts == nil && th.Level == "" {
		return nil
	}
	tc := &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevel(strings.ToUpper(th.Level))}
	if th.Budget != nil {
		b := int32(*th.Budget)
		tc.ThinkingBudget = &b
	}
	if th.IncludeThoughts != nil {
		tc.IncludeThoughts = *th.IncludeThoughts
	}
	return tc
}

// conversation converts Antler messages to Gemini contents: system
// messages become the system instruction, assistant messages are the
// "model" role, and the results of one step's tool calls are sent
// together as one user turn of function responses.
func conversation(in []model.Message) (string, []*genai.Content, error) {
	var system []string
	var out []*genai.Content
	names := map[string]string{} // tool call id -> name
	for i, msg := range in {
		if msg.Remove {
			continue
		}
		switch msg.Role {
		case model.RoleSystem:
			system = append(system, textOf(msg))
		case model.RoleUser:
			out = append(out, &genai.Content{Role: genai.RoleUser, Parts: userParts(msg)})
		case model.RoleAssistant:
			c, err := modelContent(msg)
			if err != nil {
				return "", nil, fmt.Errorf("message %d: %w", i, err)
			}
			for _, tc := range msg.ToolCalls {
				names[tc.ID] = tc.Name
			}
			out = append(out, c)
		case model.RoleTool:
			part := functionResponse(msg, names)
			if n := len(out); n > 0 && isResponses(out[n-1]) {
				out[n-1].Parts = append(out[n-1].Parts, part)
				continue
			}
			out = append(out, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{part}})
		default:
			return "", nil, fmt.Errorf("message %d has unknown role %q", i, msg.Role)
		}
	}
	return strings.Join(system, "\n\n"), out, nil
}

func isResponses(c *genai.Content) bool {
	return c.Role == genai.RoleUser && len(c.Parts) > 0 && c.Parts[0].FunctionResponse != nil
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

func userParts(msg model.Message) []*genai.Part {
	var parts []*genai.Part
	if msg.Content != "" {
		parts = append(parts, genai.NewPartFromText(msg.Content))
	}
	for _, p := range msg.Parts {
		switch p.Type {
		case model.PartText:
			parts = append(parts, genai.NewPartFromText(p.Text))
		case model.PartImage:
			mt := p.MIMEType
			if mt == "" {
				mt = "application/octet-stream"
			}
			parts = append(parts, genai.NewPartFromBytes(p.Data, mt))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, genai.NewPartFromText(""))
	}
	return parts
}

func modelContent(msg model.Message) (*genai.Content, error) {
	c := &genai.Content{Role: genai.RoleModel}
	if text := textOf(msg); text != "" || len(msg.ToolCalls) == 0 {
		c.Parts = append(c.Parts, genai.NewPartFromText(text))
	}
	for _, tc := range msg.ToolCalls {
		args := map[string]any{}
		if len(tc.Arguments) > 0 && string(tc.Arguments) != "null" {
			if err := json.Unmarshal(tc.Arguments, &args); err != nil {
				// A model's malformed arguments are kept as one string.
				args = map[string]any{"arguments": string(tc.Arguments)}
			}
		}
		p := &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.ID, Name: tc.Name, Args: args}}
		if tc.Signature != "" {
			sig, err := base64.StdEncoding.DecodeString(tc.Signature)
			if err != nil {
				return nil, fmt.Errorf("tool call %s: thought signature is not base64: %w", tc.ID, err)
			}
			p.ThoughtSignature = sig
		}
		c.Parts = append(c.Parts, p)
	}
	return c, nil
}

// functionResponse answers a call: {"output": text}, or {"error": text}
// for a failed call.
func functionResponse(msg model.Message, names map[string]string) *genai.Part {
	name := msg.Name
	if name == "" {
		name = names[msg.ToolCallID]
	}
	key := "output"
	if msg.Status == "error" {
		key = "error"
	}
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: msg.ToolCallID, Name: name,
		Response: map[string]any{key: textOf(msg)}}}
}
