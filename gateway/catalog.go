package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/toolset"
)

// healthz is GET /healthz (no authentication).
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
}

// notFound answers unknown paths in FastAPI's shape.
func notFound(w http.ResponseWriter, _ *http.Request) {
	writeError(w, http.StatusNotFound, "Not Found")
}

// listModels is GET /api/models: the configured models without their
// provider options (keys never leave the server), and whether the
// frontend shows token usage (config token_usage.enabled).
func (s *Server) listModels(w http.ResponseWriter, r *http.Request, u *principal) {
	out := make([]any, 0, len(s.cfg.Models))
	for _, m := range s.visibleModels(r, u) {
		out = append(out, modelJSON(m))
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": out, "token_usage": map[string]any{"enabled": s.cfg.TokenUsage.Enabled}})
}

// modelJSON is one model of GET /api/models and GET /api/models/{name}.
func modelJSON(m config.Model) map[string]any {
	display := m.DisplayName
	if display == "" {
		display = m.Name
	}
	return map[string]any{"name": m.Name, "model": m.Model, "display_name": display,
		"description": nilIfEmpty(m.Description), "supports_thinking": m.SupportsThinking,
		"supports_reasoning_effort": m.SupportsReasoningEffort, "supports_vision": m.SupportsVision}
}

// features is GET /api/features.
func (s *Server) features(w http.ResponseWriter, _ *http.Request, _ *principal) {
	writeJSON(w, http.StatusOK, map[string]any{
		"agents_api":      map[string]any{"enabled": s.opts.Agents != nil},
		"browser_control": map[string]any{"enabled": false},
		"mcp_tasks":       map[string]any{"enabled": s.opts.MCPTasks != nil},
	})
}

// me is GET /api/v1/auth/me: the caller, in the shape DeerFlow's
// frontend validates (an email-like address is required).
func (s *Server) me(w http.ResponseWriter, _ *http.Request, u *principal) {
	role := "user"
	if u.Admin {
		role = "admin"
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": u.ID, "email": u.ID + "@antler.local", "system_role": role,
		"needs_setup": false, "oauth_provider": nil})
}

// toolJSON is one element of GET /api/tools, the same as
// `antler tools list --json`.
type toolJSON struct {
	Name        string          `json:"name"`
	Source      toolset.Source  `json:"source"`
	Group       string          `json:"group"`
	Deferred    bool            `json:"deferred"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Annotations are an MCP tool's title and the hints its server
	// stated (readOnlyHint, destructiveHint, idempotentHint,
	// openWorldHint); absent for other tools and for MCP tools that
	// state none.
	Annotations *mcptools.Annotations `json:"annotations,omitempty"`
}

// listTools is GET /api/tools[?model=&groups=a,b&subagents=1&no_mcp=1&agent=&bootstrap=1]:
// the tools a run with these options binds, in bound order, exactly as
// `antler tools list --json` prints them (built by the lead-agent factory:
// setup_agent/update_agent, deferred marks and tool_search included).
// groups absent keeps all groups, present and empty keeps none. Without
// any configured model it is the plain assembly. An agent argument that is
// not an agent name (customagent.NamePattern) is refused with 422 before
// anything is built; an unknown agent is 404.
func (s *Server) listTools(w http.ResponseWriter, r *http.Request, u *principal) {
	q := r.URL.Query()
	if a := q.Get("agent"); a != "" {
		if err := customagent.ValidateName(a); err != nil {
			writeError(w, http.StatusUnprocessableEntity, "Invalid query argument agent: %v", err)
			return
		}
	}
	flag := func(k string) bool { b, _ := strconv.ParseBool(q.Get(k)); return b }
	var groups []string
	if q.Has("groups") {
		groups = []string{}
		for _, g := range strings.Split(q.Get("groups"), ",") {
			if g = strings.TrimSpace(g); g != "" {
				groups = append(groups, g)
			}
		}
	}
	var ts *toolset.Toolset
	var err error
	if len(s.cfg.Models) == 0 {
		ts, err = s.opts.Factory.Assembler.Assemble(r.Context(), toolset.Options{Groups: groups, IncludeMCP: !flag("no_mcp"),
			User: u.ID, ModelName: q.Get("model"), SubagentEnabled: flag("subagents")})
		if err == nil { // the factory's filter, without a model to build
			ts.Entries = agent.FilterEntries(r.Context(), s.authz, map[string]any{"user_id": u.ID, "user_role": u.Role}, ts.Entries)
		}
	} else {
		var lead *agent.Lead
		lead, err = s.factory.Build(r.Context(), agent.Request{UserID: u.ID, UserRole: u.Role, ThreadID: "tools", AgentName: q.Get("agent"),
			ModelName: q.Get("model"), IsBootstrap: flag("bootstrap"), SubagentEnabled: flag("subagents"),
			NoMCP: flag("no_mcp"), ToolGroups: groups})
		if lead != nil {
			ts = lead.Tools
		}
	}
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, agent.ErrAgentNotFound) {
			status = http.StatusNotFound
		}
		writeError(w, status, "Cannot assemble tools: %v", err)
		return
	}
	out := make([]toolJSON, 0, len(ts.Entries))
	for _, e := range ts.Entries {
		schema := e.Tool.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		out = append(out, toolJSON{Name: e.Tool.Name, Source: e.Source, Group: e.Group, Deferred: e.Deferred,
			Description: e.Tool.Description, InputSchema: schema, Annotations: mcptools.AnnotationsOf(e.Tool.Meta)})
	}
	writeJSON(w, http.StatusOK, out)
}
