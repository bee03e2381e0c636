package anthropic_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/antlerhq/antler/model"
)

// A failed answer's error type and wait hint reach the ProviderError, for
// the agent's llm_error_handling to classify and honour.
func TestProviderErrorCodeAndRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		header   map[string]string
		status   int
		body     string
		wantCode string
		wantWait time.Duration
	}{
		{"rate limited with retry-after", map[string]string{"Retry-After": "7"}, 429,
			`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "rate_limit_error", 7 * time.Second},
		{"milliseconds win", map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"}, 429,
			`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "rate_limit_error", 1500 * time.Millisecond},
		{"a wait too long is bounded", map[string]string{"Retry-After": "86400"}, 503,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", 2 * time.Minute},
		{"no hint, a body that is not JSON", nil, 500, `oops`, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			_, err := run(t.Context(), newModel(t, srv.URL, nil), hello())
			var pe *model.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v", err, err)
			}
			if pe.Code != tc.wantCode || pe.RetryAfter != tc.wantWait {
				t.Errorf("code %q, retry after %v; want %q, %v", pe.Code, pe.RetryAfter, tc.wantCode, tc.wantWait)
			}
		})
	}
}
