package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// writeJSON writes v as the JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes FastAPI's error shape, {"detail": msg}, which
// DeerFlow's frontend reads.
func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	writeJSON(w, status, map[string]any{"detail": msg})
}

// decodeJSON reads a JSON body of at most the server's limit into v. An
// empty body leaves v unchanged. It answers the error itself (413 or 422)
// and returns false.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body := http.MaxBytesReader(w, r.Body, s.maxBody)
	dec := json.NewDecoder(body)
	err := dec.Decode(v)
	if errors.Is(err, io.EOF) {
		return true
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "Request body is larger than %d bytes", tooBig.Limit)
		return false
	case err != nil:
		writeError(w, http.StatusUnprocessableEntity, "Invalid JSON body: %v", err)
		return false
	}
	return true
}

// isoTime formats t as the ISO 8601 timestamps LangGraph sends.
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
