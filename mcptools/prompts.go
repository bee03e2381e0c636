package mcptools

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file offers the prompts of the MCP servers (prompts/list and
// prompts/get) to a client that shows them to the human, such as chat's
// "/server:prompt" commands. They are never shown to the model as tools.

// MaxPromptsPerServer bounds the prompts listed of one server.
const MaxPromptsPerServer = 200

// MaxPromptText bounds the characters of a prompt's expansion.
const MaxPromptText = 100_000

// Prompt is one prompt of a server.
type Prompt struct {
	Server, Name, Title, Description string
	Arguments                        []PromptArgument
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name, Description string
	Required          bool
}

// promptServersLocked are the listed, enabled servers that state the
// prompts capability, sorted.
func (m *Manager) promptServersLocked() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(m.servers)) {
		if s := m.servers[name]; s.listed && s.prompts && s.cfg.Enabled && s.cfg.Err == nil {
			out = append(out, name)
		}
	}
	return out
}

// Prompts lists the prompts of every listed server that states the
// prompts capability (discovering the servers first, as Tools does),
// sorted by server and name; at most MaxPromptsPerServer of each. A
// server that fails to list is logged and skipped.
func (m *Manager) Prompts(ctx context.Context) ([]Prompt, error) {
	if _, err := m.Tools(ctx); err != nil {
		return nil, err
	}
	m.mu.Lock()
	servers := m.promptServersLocked()
	m.mu.Unlock()
	var out []Prompt
	for _, name := range servers {
		var got []Prompt
		res, err := m.onSession(ctx, nil, name, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
			for p, err := range cs.Prompts(ctx, nil) {
				if err != nil {
					return nil, err
				}
				if len(got) == MaxPromptsPerServer {
					break
				}
				pr := Prompt{Server: name, Name: p.Name, Title: p.Title, Description: p.Description}
				for _, a := range p.Arguments {
					if a != nil {
						pr.Arguments = append(pr.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
					}
				}
				got = append(got, pr)
			}
			return &mcp.CallToolResult{}, nil
		})
		if err != nil {
			return nil, err
		}
		if res.IsError {
			m.log.Warn(fmt.Sprintf("Could not list the prompts of MCP server '%s'", name), "err", res.TextContent())
			continue
		}
		slices.SortFunc(got, func(a, b Prompt) int { return cmp.Compare(a.Name, b.Name) })
		out = append(out, got...)
	}
	return out, nil
}

// GetPrompt expands a prompt of server with args: the texts of its
// messages, joined by blank lines (a message of another kind is named in
// brackets), cut at MaxPromptText characters. A failure (unknown prompt,
// missing argument, server gone) is an error with the server's words.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (string, error) {
	res, err := m.onSession(ctx, nil, server, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
		r, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		if err != nil {
			return nil, err
		}
		var parts []string
		for _, msg := range r.Messages {
			if msg == nil {
				continue
			}
			switch c := msg.Content.(type) {
			case *mcp.TextContent:
				parts = append(parts, c.Text)
			case *mcp.EmbeddedResource:
				if c.Resource != nil && c.Resource.Text != "" {
					parts = append(parts, c.Resource.Text)
					continue
				}
				parts = append(parts, "[embedded resource]")
			default:
				parts = append(parts, fmt.Sprintf("[%T content]", msg.Content))
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(parts, "\n\n")}}}, nil
	})
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", fmt.Errorf("%s", strings.TrimPrefix(res.TextContent(), "Error: "))
	}
	return clipText(res.TextContent(), MaxPromptText), nil
}
