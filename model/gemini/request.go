package gemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/antlerhq/antler/model"
)

// request shapes req into a streamGenerateContent body.
func (m *Model) request(req *model.Request) (*generateRequest, error) {
	system, contents, err := conversation(req.Messages)
	if err != nil {
		return nil, err
	}
	out := &generateRequest{Contents: contents}
	if system != "" {
		out.SystemInstruction = &content{Role: roleUser, Parts: []*part{{Text: system}}}
	}
	cfg := &out.GenerationConfig
	if n := req.MaxTokens; n > 0 {
		cfg.MaxOutputTokens = n
	} else if m.opts.MaxTokens > 0 {
		cfg.MaxOutputTokens = m.opts.MaxTokens
	}
	cfg.Temperature = m.opts.Temperature
	if req.Temperature != nil {
		cfg.Temperature = req.Temperature
	}
	cfg.TopP, cfg.TopK = m.opts.TopP, m.opts.TopK

	th := m.opts.Thinking
	if m.opts.SupportsThinking {
		if req.Thinking {
			th = overlay(th, m.opts.ThinkingOn)
		} else {
			th = overlay(th, m.opts.ThinkingOff)
		}
	}
	cfg.ThinkingConfig = newThinkingConfig(th)

	if len(req.Tools) > 0 {
		decls := make([]functionDeclaration, 0, len(req.Tools))
		for _, d := range req.Tools {
			fd := functionDeclaration{Name: d.Name, Description: d.Description}
			if len(d.InputSchema) > 0 && string(d.InputSchema) != "null" {
				var schema map[string]any
				if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
					return nil, fmt.Errorf("tool %q: input schema is not a JSON object: %w", d.Name, err)
				}
				fd.ParametersJSONSchema = schema
			}
			decls = append(decls, fd)
		}
		out.Tools = []tool{{FunctionDeclarations: decls}}
	}
	return out, nil
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

func newThinkingConfig(th Thinking) *thinkingConfig {
	if th.Budget == nil && th.IncludeThoughts == nil && th.Level == "" {
		return nil
	}
	tc := &thinkingConfig{ThinkingLevel: strings.ToUpper(th.Level), ThinkingBudget: th.Budget}
	if th.IncludeThoughts != nil {
		tc.IncludeThoughts = *th.IncludeThoughts
	}
	return tc
}

// conversation converts Antler messages to Gemini contents: system
// messages become the system instruction, assistant messages are the
// "model" role, and the results of one step's tool calls are sent
// together as one user turn of function responses.
func conversation(in []model.Message) (string, []*content, error) {
	var system []string
	var out []*content
	names := map[string]string{} // tool call id -> name
	for i, msg := range in {
		if msg.Remove {
			continue
		}
		switch msg.Role {
		case model.RoleSystem:
			system = append(system, msg.Text())
		case model.RoleUser:
			out = append(out, &content{Role: roleUser, Parts: userParts(msg)})
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
			res := resultPart(msg, names)
			if n := len(out); n > 0 && isResponses(out[n-1]) {
				out[n-1].Parts = append(out[n-1].Parts, res)
				continue
			}
			out = append(out, &content{Role: roleUser, Parts: []*part{res}})
		default:
			return "", nil, fmt.Errorf("message %d has unknown role %q", i, msg.Role)
		}
	}
	return strings.Join(system, "\n\n"), out, nil
}

func isResponses(c *content) bool {
	return c.Role == roleUser && len(c.Parts) > 0 && c.Parts[0].FunctionResponse != nil
}

func userParts(msg model.Message) []*part {
	var parts []*part
	if msg.Content != "" {
		parts = append(parts, &part{Text: msg.Content})
	}
	for _, p := range msg.Parts {
		switch p.Type {
		case model.PartText:
			parts = append(parts, &part{Text: p.Text})
		case model.PartImage:
			mt := p.MIMEType
			if mt == "" {
				mt = "application/octet-stream"
			}
			parts = append(parts, &part{InlineData: &blob{MIMEType: mt, Data: p.Data}})
		}
	}
	if len(parts) == 0 {
		parts = append(parts, &part{})
	}
	return parts
}

func modelContent(msg model.Message) (*content, error) {
	c := &content{Role: roleModel}
	if text := msg.Text(); text != "" || len(msg.ToolCalls) == 0 {
		c.Parts = append(c.Parts, &part{Text: text})
	}
	for _, tc := range msg.ToolCalls {
		args := map[string]any{}
		if len(tc.Arguments) > 0 && string(tc.Arguments) != "null" {
			if err := json.Unmarshal(tc.Arguments, &args); err != nil {
				// A model's malformed arguments are kept as one string.
				args = map[string]any{"arguments": string(tc.Arguments)}
			}
		}
		p := &part{FunctionCall: &fnCall{ID: tc.ID, Name: tc.Name, Args: args}}
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

// resultPart answers a call: {"output": text}, or {"error": text}
// for a failed call.
func resultPart(msg model.Message, names map[string]string) *part {
	name := msg.Name
	if name == "" {
		name = names[msg.ToolCallID]
	}
	key := "output"
	if msg.Status == "error" {
		key = "error"
	}
	return &part{FunctionResponse: &fnResponse{ID: msg.ToolCallID, Name: name,
		Response: map[string]any{key: msg.Text()}}}
}
