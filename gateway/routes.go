package gateway

import "net/http"

// routes registers every route of the gateway, in one place. Paths are
// the gateway's own (/api/...); stripLangGraph maps the SDK's
// /api/langgraph/... onto them.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	h := func(pattern string, f handlerFunc) { mux.Handle(pattern, s.auth(f)) }

	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("/", notFound)

	// LangGraph-shaped threads (docs/api.md).
	h("POST /api/threads", s.createThread)
	h("POST /api/threads/search", s.searchThreads)
	h("GET /api/threads/{tid}", s.getThread)
	h("PATCH /api/threads/{tid}", s.patchThread)
	h("DELETE /api/threads/{tid}", s.deleteThread)
	h("POST /api/threads/{tid}/history", s.history)
	h("GET /api/threads/{tid}/history", s.history)
	h("GET /api/threads/{tid}/state", s.getState)
	h("POST /api/threads/{tid}/state", s.updateState)
	h("GET /api/threads/{tid}/messages/page", s.messagesPage)
	h("POST /api/threads/{tid}/compact", s.compactThread)
	h("GET /api/threads/{tid}/token-usage", s.threadTokenUsage)

	// Runs, streamed as SSE.
	h("POST /api/threads/{tid}/runs/stream", s.streamRun)
	h("GET /api/threads/{tid}/runs", s.listRuns)
	h("GET /api/threads/{tid}/runs/{rid}", s.getRun)
	h("GET /api/threads/{tid}/runs/{rid}/stream", s.joinRun)
	h("POST /api/threads/{tid}/runs/{rid}/cancel", s.cancelRun)

	// Files.
	h("GET /api/threads/{tid}/artifacts/{path...}", s.getArtifact)
	h("POST /api/threads/{tid}/uploads", s.upload)
	h("GET /api/threads/{tid}/uploads/limits", s.uploadLimits)
	h("GET /api/threads/{tid}/uploads/list", s.listUploads)
	h("DELETE /api/threads/{tid}/uploads/{filename}", s.deleteUpload)

	// Catalogue and settings the chat page reads.
	h("GET /api/models", s.listModels)
	h("GET /api/features", s.features)
	h("GET /api/suggestions/config", s.suggestionsConfig)
	h("GET /api/v1/auth/me", s.me)
	h("GET /api/tools", s.listTools)

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

	// MCP configuration (admin).
	h("GET /api/mcp/config", s.admin(s.getMCPConfig))
	h("PUT /api/mcp/config", s.admin(s.putMCPConfig))
	h("PATCH /api/mcp/config", s.admin(s.patchMCPConfig))
	h("POST /api/mcp/cache/reset", s.admin(s.resetMCPCache))

	return stripLangGraph(mux)
}
