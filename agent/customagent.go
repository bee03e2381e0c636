package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/antlerhq/antler/customagent"
)

// CustomAgents adapts a customagent.Store to the factory's AgentLoader.
func CustomAgents(s *customagent.Store) AgentLoader { return customAgents{s} }

type customAgents struct{ s *customagent.Store }

func (c customAgents) LoadAgent(ctx context.Context, userID, name string) (*AgentSpec, error) {
	a, err := c.s.Load(userID, name)
	if errors.Is(err, customagent.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrAgentNotFound, name)
	}
	if err != nil {
		return nil, err
	}
	cfg := a.Config
	spec := &AgentSpec{Name: cfg.Name, Description: cfg.Description, Model: cfg.Model, ToolGroups: cfg.ToolGroups,
		Skills: cfg.Skills, Soul: a.Soul, ThinkingEnabled: cfg.ThinkingEnabled, MCPPlugins: cfg.MCPPlugins, MCPTools: cfg.MCPTools}
	if ms := cfg.ModelSettings; ms != nil {
		spec.Temperature, spec.MaxTokens = ms.Temperature, ms.MaxTokens
	}
	return spec, nil
}
