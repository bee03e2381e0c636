package gateway

import "net/http"

// Antler runs no IM channel (Slack, Feishu, Telegram, ...): the routes
// of DeerFlow's channels and channel_connections routers that the
// frontend calls answer in DeerFlow's shapes as DeerFlow does with
// channel connections disabled, instead of 404 (which the frontend
// retries).

// channelsDisabled is DeerFlow's refusal of a change while channel
// connections are disabled.
const channelsDisabled = "Channel connections are disabled"

// channelsStatus is GET /api/channels/: no channel service runs.
func (s *Server) channelsStatus(w http.ResponseWriter, _ *http.Request, _ *principal) {
	writeJSON(w, http.StatusOK, map[string]any{"service_running": false, "channels": map[string]any{}})
}

// channelProviders is GET /api/channels/providers: connections off, no
// provider.
func (s *Server) channelProviders(w http.ResponseWriter, _ *http.Request, _ *principal) {
	writeJSON(w, http.StatusOK, map[string]any{"enabled": false, "providers": []any{}})
}

// channelConnections is GET /api/channels/connections: none.
func (s *Server) channelConnections(w http.ResponseWriter, _ *http.Request, _ *principal) {
	writeJSON(w, http.StatusOK, map[string]any{"connections": []any{}})
}

// channelChange answers the routes that connect, configure or
// disconnect a channel (POST /api/channels/{provider}/connect, POST and
// DELETE .../{provider}/runtime-config, DELETE
// /api/channels/connections/{id}): 400, connections are disabled.
func (s *Server) channelChange(w http.ResponseWriter, _ *http.Request, _ *principal) {
	writeError(w, http.StatusBadRequest, "%s", channelsDisabled)
}
