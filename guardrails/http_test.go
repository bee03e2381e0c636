package guardrails

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// policyServer is an APort-style policy service on 127.0.0.1 answering
// with answer; it keeps the last request body and headers.
func policyServer(t *testing.T, answer func(w http.ResponseWriter, req *Request)) (*httptest.Server, func() http.Header) {
	t.Helper()
	var mu sync.Mutex
	var hdr http.Header
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hdr = r.Header.Clone()
		mu.Unlock()
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		data, _ := io.ReadAll(r.Body)
		var req Request
		if err := json.Unmarshal(data, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer(w, &req)
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, func() http.Header { mu.Lock(); defer mu.Unlock(); return hdr }
}

func httpProvider(t *testing.T, opts HTTPOptions) *HTTPProvider {
	t.Helper()
	p, err := NewHTTPProvider(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHTTPProvider_readsOAPDecisions(t *testing.T) {
	srv, hdr := policyServer(t, func(w http.ResponseWriter, req *Request) {
		if req.ToolName == "bash" {
			io.WriteString(w, `{"decision_id":"550e8400","policy_id":"system.command.execute.v1","allow":false,`+
				`"reasons":[{"code":"oap.blocked_pattern","message":"Command contains blocked pattern: rm -rf"}],"kid":"oap:registry:k"}`)
			return
		}
		io.WriteString(w, `{"decision":{"allow":true,"reasons":[{"code":"oap.allowed"}]}}`)
	})
	p := httpProvider(t, HTTPOptions{URL: srv.URL + "/verify", Headers: map[string]string{"Authorization": "Bearer s3cret"}})
	g := newGuard(t, Options{Provider: p})
	res, h, err := run(t, g, "bash", nil)
	want := "Guardrail denied: tool 'bash' was blocked (oap.blocked_pattern). Reason: Command contains blocked pattern: rm -rf. Choose an alternative approach."
	if err != nil || h.runs != 0 || res.TextContent() != want {
		t.Errorf("bash: runs %d, result %q, err %v", h.runs, res.TextContent(), err)
	}
	if got := hdr().Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("Authorization header %q", got)
	}
	if got := hdr().Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
	if _, h, err := run(t, g, "ls", nil); err != nil || h.runs != 1 {
		t.Errorf("ls (a decision under \"decision\"): runs %d, err %v", h.runs, err)
	}
}

func TestHTTPProvider_failuresFailClosed(t *testing.T) {
	// release lets the slow service's handler return when the test ends.
	release := make(chan struct{})
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter, req *Request)
		opts   HTTPOptions
		err    string
	}{
		{"server error", func(w http.ResponseWriter, _ *Request) {
			http.Error(w, "policy store down", http.StatusServiceUnavailable)
		},
			HTTPOptions{}, "503 Service Unavailable: policy store down"},
		{"not JSON", func(w http.ResponseWriter, _ *Request) { io.WriteString(w, "<html>ok</html>") }, HTTPOptions{}, "not a JSON object"},
		{"no allow", func(w http.ResponseWriter, _ *Request) { io.WriteString(w, `{"reasons":[]}`) }, HTTPOptions{}, `no boolean "allow"`},
		{"body over the bound", func(w http.ResponseWriter, _ *Request) {
			io.WriteString(w, `{"allow":true,"pad":"`+strings.Repeat("x", 200)+`"}`)
		}, HTTPOptions{MaxResponseBytes: 100}, "answered more than 100 bytes"},
		{"timeout", func(w http.ResponseWriter, r *Request) { <-release },
			HTTPOptions{Timeout: 50 * time.Millisecond}, "timed out after 50ms"},
		{"redirect", func(w http.ResponseWriter, _ *Request) {
			w.Header().Set("Location", "http://127.0.0.1:1/")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, HTTPOptions{}, "307"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := policyServer(t, tt.answer)
			t.Cleanup(func() {
				if tt.name == "timeout" {
					close(release)
				}
			})
			opts := tt.opts
			opts.URL = srv.URL
			p := httpProvider(t, opts)
			_, err := p.Evaluate(context.Background(), &Request{ToolName: "bash", ToolInput: json.RawMessage(`{}`)})
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			res, h, err := run(t, newGuard(t, Options{Provider: p}), "bash", nil)
			if err != nil || h.runs != 0 || !strings.Contains(res.TextContent(), "(oap.evaluator_error)") {
				t.Errorf("guard: runs %d, result %q, err %v", h.runs, res.TextContent(), err)
			}
		})
	}
}

func TestNewHTTPProvider_rejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "ftp://x/", "127.0.0.1:80", "http://"} {
		if _, err := NewHTTPProvider(HTTPOptions{URL: u}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}
