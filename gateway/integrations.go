package gateway

import "net/http"

// Antler has no Lark/Feishu integration (DeerFlow's integrations router
// manages a lark-cli skill pack): its status says nothing is installed
// or configured, in DeerFlow's shape, and its actions are 501.

// larkUnavailable is the reason given for each part of the status and
// the refusal of each action.
const larkUnavailable = "The Lark/Feishu integration is not available in Antler"

// larkStatus is GET /api/integrations/lark/status.
func (s *Server) larkStatus(w http.ResponseWriter, _ *http.Request, _ *principal) {
	writeJSON(w, http.StatusOK, map[string]any{
		"installed": false, "version": "", "manifest_version": nil, "latest_available_version": nil,
		"runtime_version_mismatch": false, "app_configured": false, "app_id": nil, "app_brand": nil,
		"skills_expected": 0, "skills_installed": 0, "installed_skills": []string{}, "enabled_skills": []string{},
		"install_path":         "",
		"cli":                  map[string]any{"available": false, "path": nil, "version": nil, "error": larkUnavailable},
		"auth":                 map[string]any{"status": "unavailable", "message": larkUnavailable, "user": nil, "verified": false},
		"sandbox_runtime_mode": "none", "sandbox_runtime_ready": false, "sandbox_runtime_detail": larkUnavailable,
	})
}

// larkAction answers POST /api/integrations/lark/{action...} (install,
// config/start, config/complete, config/credentials, auth/start,
// auth/complete): 501.
func (s *Server) larkAction(w http.ResponseWriter, _ *http.Request, _ *principal) {
	writeError(w, http.StatusNotImplemented, "%s", larkUnavailable)
}
