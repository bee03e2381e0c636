package gateway

import "net/http"

// workspaceChanges is GET /api/threads/{tid}/runs/{rid}/workspace-changes,
// the badge of the files a run changed. Antler records no snapshot of the
// workspace around a run, so every run answers as a DeerFlow run without
// a recorded change event: not available, in DeerFlow's shape, and the
// frontend hides the badge. include_files and include_diff change
// nothing in an empty answer. Another user's thread is 404.
func (s *Server) workspaceChanges(w http.ResponseWriter, r *http.Request, u *principal) {
	if _, ok := s.ownThread(w, r, u); !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"available": false,
		"version":   1,
		"summary": map[string]any{"created": 0, "modified": 0, "deleted": 0, "symlink_created": 0,
			"additions": 0, "deletions": 0, "truncated": false},
		"files":  []any{},
		"limits": map[string]any{},
	})
}
