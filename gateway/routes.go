package gateway

import (
	"net/http"

	"github.com/antlerhq/antler/authz"
)

// routes registers every route of the gateway, in one place. Paths are
// the gateway's own (/api/...); stripLangGraph maps the SDK's
// /api/langgraph/... onto them.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	h := func(pattern string, f handlerFunc) { mux.Handle(pattern, s.auth(f)) }

	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET "+mcpLoginCallbackPath, s.mcpLoginCallback)
	mux.HandleFunc("/", notFound)

	// LangGraph-shaped threads (docs/api.md). s.perm is DeerFlow's route
	// permission of each route (gateway/authz.go); creating and searching
	// threads need none, as in DeerFlow.
	h("POST /api/threads", s.createThread)
	h("POST /api/threads/search", s.searchThreads)
	h("GET /api/threads/{tid}", s.perm(authz.ThreadsRead, s.getThread))
	h("PATCH /api/threads/{tid}", s.perm(authz.ThreadsWrite, s.patchThread))
	h("DELETE /api/threads/{tid}", s.perm(authz.ThreadsDelete, s.deleteThread))
	h("POST /api/threads/{tid}/history", s.perm(authz.ThreadsRead, s.history))
	h("GET /api/threads/{tid}/history", s.perm(authz.ThreadsRead, s.history))
	h("GET /api/threads/{tid}/state", s.perm(authz.ThreadsRead, s.getState))
	h("POST /api/threads/{tid}/state", s.perm(authz.ThreadsWrite, s.updateState))
	h("GET /api/threads/{tid}/messages/page", s.perm(authz.RunsRead, s.messagesPage))
	h("POST /api/threads/{tid}/compact", s.perm(authz.ThreadsWrite, s.compactThread))
	h("GET /api/threads/{tid}/token-usage", s.perm(authz.ThreadsRead, s.threadTokenUsage))

	// Runs, streamed as SSE.
	h("POST /api/threads/{tid}/runs/stream", s.perm(authz.RunsCreate, s.streamRun))
	h("GET /api/threads/{tid}/runs", s.perm(authz.RunsRead, s.listRuns))
	h("GET /api/threads/{tid}/runs/{rid}", s.perm(authz.RunsRead, s.getRun))
	h("GET /api/threads/{tid}/runs/{rid}/stream", s.perm(authz.RunsRead, s.joinRun))
	h("POST /api/threads/{tid}/runs/{rid}/cancel", s.perm(authz.RunsCancel, s.cancelRun))
	h("GET /api/threads/{tid}/runs/{rid}/workspace-changes", s.perm(authz.RunsRead, s.workspaceChanges))

	// Files.
	h("GET /api/threads/{tid}/artifacts/{path...}", s.perm(authz.ThreadsRead, s.getArtifact))
	h("POST /api/threads/{tid}/uploads", s.perm(authz.ThreadsWrite, s.upload))
	h("GET /api/threads/{tid}/uploads/limits", s.perm(authz.ThreadsRead, s.uploadLimits))
	h("GET /api/threads/{tid}/uploads/list", s.perm(authz.ThreadsRead, s.listUploads))
	h("DELETE /api/threads/{tid}/uploads/{filename}", s.perm(authz.ThreadsDelete, s.deleteUpload))

	s.mcpTaskRoutes(h) // gateway/mcp_tasks.go
	s.settingsRoutes(h)
	s.scheduledTaskRoutes(h) // gateway/scheduled_tasks.go
	return stripLangGraph(mux)
}

// settingsRoutes registers the routes outside threads and runs: the
// catalogue, skills, agents, memory, channels and MCP configuration.
func (s *Server) settingsRoutes(h func(pattern string, f handlerFunc)) {
	// Catalogue and settings the chat page reads.
	h("GET /api/models", s.listModels)
	h("GET /api/models/{name}", s.getModel)
	h("GET /api/features", s.features)
	h("GET /api/suggestions/config", s.suggestionsConfig)
	h("POST /api/threads/{tid}/suggestions", s.perm(authz.ThreadsRead, s.suggestions))
	h("POST /api/input-polish", s.perm(authz.RunsCreate, s.inputPolish))
	h("GET /api/v1/auth/me", s.me)
	h("GET /api/tools", s.listTools)
	s.userMCPRoutes(h) // the caller's own MCP servers (gateway/mcp_user.go)

	// Skills (DeerFlow's gateway routes).
	h("GET /api/skills", s.listSkills)
	h("GET /api/skills/{name}", s.getSkill)
	h("PUT /api/skills/{name}", s.putSkill)

	// Custom agents.
	h("GET /api/agents", s.listAgents)
	h("GET /api/agents/check", s.checkAgent)
	h("GET /api/agents/{name}", s.getAgent)
	h("POST /api/agents", s.createAgent)
	h("PUT /api/agents/{name}", s.updateAgent)
	h("DELETE /api/agents/{name}", s.deleteAgent)

	// Long-term memory, the caller's own (gateway/memory.go).
	h("GET /api/memory", s.getMemory)
	h("DELETE /api/memory", s.clearMemory)
	h("GET /api/memory/export", s.exportMemory)
	h("POST /api/memory/import", s.importMemory)
	h("POST /api/memory/facts", s.createMemoryFact)
	h("PATCH /api/memory/facts/{id}", s.patchMemoryFact)
	h("DELETE /api/memory/facts/{id}", s.deleteMemoryFact)

	// IM channels and the Lark integration: not configured
	// (gateway/channels.go, gateway/integrations.go). The DELETE pattern
	// serves both .../{provider}/runtime-config and .../connections/{id}.
	h("GET /api/channels/{$}", s.channelsStatus)
	h("GET /api/channels/providers", s.channelProviders)
	h("GET /api/channels/connections", s.channelConnections)
	h("POST /api/channels/{provider}/connect", s.channelChange)
	h("POST /api/channels/{provider}/runtime-config", s.channelChange)
	h("DELETE /api/channels/{a}/{b}", s.channelChange)
	h("GET /api/integrations/lark/status", s.larkStatus)
	h("POST /api/integrations/lark/{action...}", s.larkAction)

	// MCP configuration (admin).
	h("GET /api/mcp/config", s.admin(s.getMCPConfig))
	h("PUT /api/mcp/config", s.admin(s.putMCPConfig))
	h("PATCH /api/mcp/config", s.admin(s.patchMCPConfig))
	h("POST /api/mcp/cache/reset", s.admin(s.resetMCPCache))

	// MCP login, the caller's own (gateway/mcp_oauth.go). The callback
	// carries no bearer token: its state names the user.
	h("POST /api/mcp/oauth/{name}/start", s.mcpLoginStart)
	h("GET /api/mcp/oauth/{name}/status", s.mcpLoginStatus)
	h("DELETE /api/mcp/oauth/{name}", s.mcpLogout)
}
