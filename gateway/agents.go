package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/customagent"
)

// agentJSON is DeerFlow's Agent object.
func agentJSON(a *customagent.Agent) map[string]any {
	c := a.Config
	out := map[string]any{"name": c.Name, "description": c.Description, "model": nilIfEmpty(c.Model),
		"tool_groups": c.ToolGroups, "skills": c.Skills, "model_settings": nil,
		"thinking_enabled": c.ThinkingEnabled, "reasoning_effort": nilIfEmpty(c.ReasoningEffort),
		"soul": a.Soul, "legacy": a.Legacy, "mcp_plugins": c.MCPPlugins, "mcp_tools": c.MCPTools}
	if ms := c.ModelSettings; ms != nil {
		out["model_settings"] = map[string]any{"temperature": ms.Temperature, "max_tokens": ms.MaxTokens}
	}
	return out
}

// agentBody is the body of POST and PUT /api/agents; a field left out of
// a PUT keeps its value.
type agentBody struct {
	Name            *string         `json:"name"`
	Description     *string         `json:"description"`
	Model           *string         `json:"model"`
	ToolGroups      json.RawMessage `json:"tool_groups"`
	Skills          json.RawMessage `json:"skills"`
	ModelSettings   json.RawMessage `json:"model_settings"`
	ThinkingEnabled json.RawMessage `json:"thinking_enabled"`
	ReasoningEffort *string         `json:"reasoning_effort"`
	Soul            *string         `json:"soul"`
	// MCPPlugins and MCPTools are the agent's MCP servers (Antler; see
	// customagent.Config); null clears them.
	MCPPlugins json.RawMessage `json:"mcp_plugins"`
	MCPTools   json.RawMessage `json:"mcp_tools"`
}

// apply writes the body's fields into c; the error text is the 422
// detail.
func (b *agentBody) apply(s *Server, user string, c *customagent.Config) (string, bool) {
	if b.Description != nil {
		c.Description = *b.Description
	}
	if b.Model != nil {
		if *b.Model != "" {
			if _, ok := s.cfg.Model(*b.Model); !ok {
				return "Model '" + *b.Model + "' is not configured", false
			}
		}
		c.Model = *b.Model
	}
	lists := []struct {
		raw json.RawMessage
		dst *[]string
		key string
	}{{b.ToolGroups, &c.ToolGroups, "tool_groups"}, {b.Skills, &c.Skills, "skills"}}
	for _, l := range lists {
		if len(l.raw) == 0 {
			continue
		}
		var v []string
		if err := json.Unmarshal(l.raw, &v); err != nil {
			return l.key + " must be a list of strings or null", false
		}
		*l.dst = v
	}
	if len(b.ModelSettings) > 0 {
		var ms *struct {
			Temperature *float64 `json:"temperature"`
			MaxTokens   *int     `json:"max_tokens"`
		}
		if err := json.Unmarshal(b.ModelSettings, &ms); err != nil {
			return "model_settings must be {temperature, max_tokens} or null", false
		}
		c.ModelSettings = nil
		if ms != nil {
			if t := ms.Temperature; t != nil && (*t < 0 || *t > 2) {
				return "model_settings.temperature must be between 0 and 2", false
			}
			if m := ms.MaxTokens; m != nil && (*m < 1 || *m > customagent.MaxAgentOutputTokens) {
				return "model_settings.max_tokens must be between 1 and 200000", false
			}
			c.ModelSettings = &customagent.ModelSettings{Temperature: ms.Temperature, MaxTokens: ms.MaxTokens}
		}
	}
	if len(b.ThinkingEnabled) > 0 {
		var v *bool
		if err := json.Unmarshal(b.ThinkingEnabled, &v); err != nil {
			return "thinking_enabled must be a boolean or null", false
		}
		c.ThinkingEnabled = v
	}
	if b.ReasoningEffort != nil {
		switch *b.ReasoningEffort {
		case "", "low", "medium", "high":
			c.ReasoningEffort = *b.ReasoningEffort
		default:
			return "reasoning_effort must be low, medium or high", false
		}
	}
	return b.applyMCP(s, user, c)
}

// applyMCP writes mcp_plugins and mcp_tools: every server must be one
// the user's runs see (or DeerFlow's installation id of one), and
// mcp_tools must fit mcp_plugins.
func (b *agentBody) applyMCP(s *Server, user string, c *customagent.Config) (string, bool) {
	if len(b.MCPPlugins) > 0 {
		var v []string
		if err := json.Unmarshal(b.MCPPlugins, &v); err != nil {
			return "mcp_plugins must be a list of strings or null", false
		}
		if v != nil {
			known := s.mcpServerNames(user)
			if unknown := builtin.UnknownMCPServers(v, known); len(unknown) > 0 {
				return fmt.Sprintf("Unknown MCP server(s) in mcp_plugins: %s. Configured servers: %s.",
					strings.Join(unknown, ", "), namesOrNone(known)), false
			}
		}
		c.MCPPlugins = v
	}
	if len(b.MCPTools) > 0 {
		var v map[string][]string
		if err := json.Unmarshal(b.MCPTools, &v); err != nil {
			return "mcp_tools must be an object of server names to lists of tool names, or null", false
		}
		c.MCPTools = v
	}
	if err := c.CheckMCP(); err != nil {
		return err.Error(), false
	}
	return "", true
}

// agentsAPIDisabledText is DeerFlow's 403 detail for the closed agents API.
const agentsAPIDisabledText = "Custom-agent management API is disabled. Set agents_api.enabled=true to expose agent and user-profile routes over HTTP."

// agentsOn answers 403 when the agents API is off.
func (s *Server) agentsOn(w http.ResponseWriter) bool {
	if s.opts.Agents == nil {
		writeError(w, http.StatusForbidden, "%s", agentsAPIDisabledText)
		return false
	}
	return true
}

// agentName validates the {name} path value (422 with DeerFlow's text).
func agentName(w http.ResponseWriter, name string) bool {
	if err := customagent.ValidateName(name); err != nil {
		writeError(w, http.StatusUnprocessableEntity, "%v", err)
		return false
	}
	return true
}

// listAgents is GET /api/agents: the caller's agents (and DeerFlow's
// shared legacy agents, read-only).
func (s *Server) listAgents(w http.ResponseWriter, _ *http.Request, u *principal) {
	if !s.agentsOn(w) {
		return
	}
	list, err := s.opts.Agents.List(u.ID)
	if err != nil {
		s.internal(w, "cannot list agents", err)
		return
	}
	out := make([]any, 0, len(list))
	for _, a := range list {
		out = append(out, agentJSON(a))
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out})
}

// checkAgent is GET /api/agents/check?name=: whether the caller may
// create that agent.
func (s *Server) checkAgent(w http.ResponseWriter, r *http.Request, u *principal) {
	if !s.agentsOn(w) {
		return
	}
	name := r.URL.Query().Get("name")
	if !agentName(w, name) {
		return
	}
	exists, err := s.opts.Agents.Exists(u.ID, name)
	if err != nil {
		s.internal(w, "cannot check the agent", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"available": !exists, "name": name})
}

// getAgent is GET /api/agents/{name}.
func (s *Server) getAgent(w http.ResponseWriter, r *http.Request, u *principal) {
	if !s.agentsOn(w) || !agentName(w, r.PathValue("name")) {
		return
	}
	a, err := s.opts.Agents.Load(u.ID, r.PathValue("name"))
	if s.agentError(w, r.PathValue("name"), err) {
		return
	}
	writeJSON(w, http.StatusOK, agentJSON(a))
}

// agentError answers a store error; it returns false for nil.
func (s *Server) agentError(w http.ResponseWriter, name string, err error) bool {
	var ce *customagent.ConfigError
	switch {
	case err == nil:
		return false
	case errors.Is(err, customagent.ErrNotFound):
		writeError(w, http.StatusNotFound, "Agent '%s' not found", name)
	case errors.As(err, &ce):
		writeError(w, http.StatusUnprocessableEntity, "%v", err)
	default:
		s.internal(w, "cannot access the agent", err)
	}
	return true
}

// createAgent is POST /api/agents: 201, or 409 when the caller already
// has the agent.
func (s *Server) createAgent(w http.ResponseWriter, r *http.Request, u *principal) {
	if !s.agentsOn(w) {
		return
	}
	var body agentBody
	if !s.decodeJSON(w, r, &body) {
		return
	}
	if body.Name == nil || !agentName(w, *body.Name) {
		if body.Name == nil {
			writeError(w, http.StatusUnprocessableEntity, "name is required")
		}
		return
	}
	name := *body.Name
	exists, err := s.opts.Agents.Exists(u.ID, name)
	if err != nil {
		s.internal(w, "cannot check the agent", err)
		return
	}
	if exists {
		writeError(w, http.StatusConflict, "Agent '%s' already exists", name)
		return
	}
	cfg := &customagent.Config{Name: name}
	if msg, ok := body.apply(s, u.ID, cfg); !ok {
		writeError(w, http.StatusUnprocessableEntity, "%s", msg)
		return
	}
	soul := ""
	if body.Soul != nil {
		soul = *body.Soul
	}
	if err := s.opts.Agents.Update(u.ID, name, customagent.Change{Config: cfg, Soul: &soul}); err != nil {
		s.internal(w, "cannot create the agent", err)
		return
	}
	a, err := s.opts.Agents.Load(u.ID, name)
	if s.agentError(w, name, err) {
		return
	}
	writeJSON(w, http.StatusCreated, agentJSON(a))
}

// updateAgent is PUT /api/agents/{name}: the fields given replace the
// agent's; 404 for an agent the caller does not have, 409 for a shared
// legacy agent (read-only).
func (s *Server) updateAgent(w http.ResponseWriter, r *http.Request, u *principal) {
	name := r.PathValue("name")
	if !s.agentsOn(w) || !agentName(w, name) {
		return
	}
	var body agentBody
	if !s.decodeJSON(w, r, &body) {
		return
	}
	a, err := s.opts.Agents.Load(u.ID, name)
	if s.agentError(w, name, err) {
		return
	}
	if a.Legacy {
		writeError(w, http.StatusConflict, "Agent '%s' is a shared legacy agent and cannot be changed here", name)
		return
	}
	cfg := a.Config.Clone()
	if msg, ok := body.apply(s, u.ID, cfg); !ok {
		writeError(w, http.StatusUnprocessableEntity, "%s", msg)
		return
	}
	if err := s.opts.Agents.Update(u.ID, name, customagent.Change{Config: cfg, Soul: body.Soul}); err != nil {
		s.internal(w, "cannot update the agent", err)
		return
	}
	a, err = s.opts.Agents.Load(u.ID, name)
	if s.agentError(w, name, err) {
		return
	}
	writeJSON(w, http.StatusOK, agentJSON(a))
}

// deleteAgent is DELETE /api/agents/{name}: 204. The folder is first
// renamed to a hidden name in the same directory (atomic: the agent is
// gone at once) and then removed.
func (s *Server) deleteAgent(w http.ResponseWriter, r *http.Request, u *principal) {
	name := r.PathValue("name")
	if !s.agentsOn(w) || !agentName(w, name) {
		return
	}
	a, err := s.opts.Agents.Load(u.ID, name)
	if s.agentError(w, name, err) {
		return
	}
	if a.Legacy {
		writeError(w, http.StatusConflict, "Agent '%s' is a shared legacy agent and cannot be deleted here", name)
		return
	}
	dir, err := s.opts.Agents.Dir(u.ID, name)
	if err != nil {
		s.internal(w, "cannot delete the agent", err)
		return
	}
	trash := filepath.Join(filepath.Dir(dir), ".deleted-"+uuid.NewString())
	if err := os.Rename(dir, trash); err != nil {
		s.internal(w, "cannot delete the agent", err)
		return
	}
	if err := os.RemoveAll(trash); err != nil {
		s.logger.Warn("cannot remove a deleted agent's folder", "path", trash, "err", err)
	}
	w.WriteHeader(http.StatusNoContent)
}
