package gateway

import (
	"net/http"
	"slices"
	"strings"
)

// corsHeaders are the response headers a browser on another origin may
// read: the frontend follows Content-Location to re-attach to a run.
const corsExposed = "Content-Location, Location, Content-Range, Content-Disposition"

// withCORS lets a browser page served from one of origins (the Next.js
// frontend on its own port) call the gateway directly. Preflights from an
// allowed origin are answered here; requests from other origins get no
// CORS headers, so browsers refuse them. No origins means same-origin
// only, the default. "*" allows any origin, without credentials.
func withCORS(origins []string, next http.Handler) http.Handler {
	if len(origins) == 0 {
		return next
	}
	any := slices.Contains(origins, "*")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		allowed := origin != "" && (any || slices.Contains(origins, origin))
		if allowed {
			h := w.Header()
			h.Add("Vary", "Origin")
			if any {
				h.Set("Access-Control-Allow-Origin", "*")
			} else {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Credentials", "true")
			}
			h.Set("Access-Control-Expose-Headers", corsExposed)
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS")
				if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
					h.Set("Access-Control-Allow-Headers", req)
				} else {
					h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
				}
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// SplitOrigins parses a comma-separated origin list (DeerFlow's
// GATEWAY_CORS_ORIGINS form).
func SplitOrigins(s string) []string {
	var out []string
	for _, o := range strings.Split(s, ",") {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o != "" {
			out = append(out, o)
		}
	}
	return out
}
