package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCORS(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Location", "/api/threads/t/runs/r")
		w.WriteHeader(http.StatusOK)
	})
	tests := []struct {
		name        string
		origins     []string
		method      string
		origin      string
		preflight   bool
		wantStatus  int
		wantAllowed string
		wantCreds   string
	}{
		{"same-origin only by default", nil, "GET", "http://localhost:3000", false, 200, "", ""},
		{"allowed origin", []string{"http://localhost:3000"}, "GET", "http://localhost:3000", false, 200, "http://localhost:3000", "true"},
		{"other origin gets no headers", []string{"http://localhost:3000"}, "GET", "http://evil.test", false, 200, "", ""},
		{"preflight answered", []string{"http://localhost:3000"}, "OPTIONS", "http://localhost:3000", true, 204, "http://localhost:3000", "true"},
		{"preflight from other origin not answered", []string{"http://localhost:3000"}, "OPTIONS", "http://evil.test", true, 200, "", ""},
		{"wildcard without credentials", []string{"*"}, "GET", "http://any.test", false, 200, "*", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/api/models", nil)
			req.Header.Set("Origin", tt.origin)
			if tt.preflight {
				req.Header.Set("Access-Control-Request-Method", "POST")
				req.Header.Set("Access-Control-Request-Headers", "content-type")
			}
			rec := httptest.NewRecorder()
			withCORS(tt.origins, ok).ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus {
				t.Errorf("status %d, want %d", rec.Code, tt.wantStatus)
			}
			h := rec.Header()
			if got := h.Get("Access-Control-Allow-Origin"); got != tt.wantAllowed {
				t.Errorf("Allow-Origin %q, want %q", got, tt.wantAllowed)
			}
			if got := h.Get("Access-Control-Allow-Credentials"); got != tt.wantCreds {
				t.Errorf("Allow-Credentials %q, want %q", got, tt.wantCreds)
			}
			if tt.wantAllowed != "" && h.Get("Access-Control-Expose-Headers") == "" {
				t.Error("Content-Location not exposed")
			}
		})
	}
}

func TestSplitOrigins(t *testing.T) {
	got := SplitOrigins(" http://a:3000/, ,http://b ")
	if len(got) != 2 || got[0] != "http://a:3000" || got[1] != "http://b" {
		t.Errorf("got %q", got)
	}
}
