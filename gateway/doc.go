// Package gateway is Antler's HTTP API: the LangGraph-shaped thread and
// run routes that DeerFlow's Next.js frontend and LangGraph SDK clients
// call, with runs streamed as server-sent events, plus DeerFlow's gateway
// routes for models, uploads, artifacts, custom agents, skills and the MCP
// configuration, Antler's GET /api/tools and /healthz.
//
// Start with [New]: it takes the store, the lead-agent factory's options
// and the per-user places, and returns a [Server] whose [Server.Handler]
// serves every route (registered in one place, routes.go). Requests under
// /api/langgraph/ are served with that prefix stripped, so the frontend's
// two base URLs land on the same handlers.
//
// Every route is scoped to the caller's user: a bearer token from
// config's gateway.tokens names it, and without tokens one default user is
// served (the caller must then listen on loopback only; see
// [Server.RequiresLoopback]). Another user's threads, runs, files, agents
// and skills answer 404.
//
// A run executes in its own goroutine, detached from the request that
// started it; its SSE frames are kept in memory until it ends, so a client
// may disconnect (with on_disconnect "continue") and rejoin. Only one run
// per thread is active at a time: [RunLocks] grants it (in-process by
// default; a shared store needs a shared lease).
package gateway
