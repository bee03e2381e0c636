package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
)

// answer is one scripted HTTP answer of a flaky server.
type answer struct {
	status  int
	headers map[string]string
	body    string
}

// flaky answers the n-th request with answers[n] (the last repeats) and
// counts the requests and the headers they carried.
type flaky struct {
	answers []answer

	mu      sync.Mutex
	n       int
	headers []http.Header
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	f.mu.Lock()
	a := f.answers[min(f.n, len(f.answers)-1)]
	f.n++
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	for k, v := range a.headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func (f *flaky) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// sleeps records the waits between attempts instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

const okStream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

// generate runs one call against url with retries retries and returns
// the final text, the recorded waits and the error.
func generate(t *testing.T, url string, retries int, edit func(*Options)) (string, []time.Duration, error) {
	t.Helper()
	opts := Options{Name: "m", Model: "gpt-test", APIKey: "k", BaseURL: url, MaxRetries: retries}
	if edit != nil {
		edit(&opts)
	}
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	rec := &sleeps{}
	m.client.sleep = rec.sleep
	var text string
	req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hello"}}}
	for ev, err := range m.Generate(t.Context(), req) {
		if err != nil {
			return text, rec.d, err
		}
		text += ev.TextDelta
	}
	return text, rec.d, nil
}

func TestRetries(t *testing.T) {
	tooMany := func(h map[string]string) answer {
		return answer{status: http.StatusTooManyRequests, headers: h, body: `{"error":{"message":"slow down"}}`}
	}
	ok := answer{status: http.StatusOK, headers: map[string]string{"Content-Type": "text/event-stream"}, body: okStream}
	tests := []struct {
		name       string
		answers    []answer
		retries    int
		wantCalls  int
		wantWaits  []time.Duration // exact waits; nil = check wantRanges
		wantRanges [][2]time.Duration
		wantStatus int // 0 = success
	}{
		{
			name:      "Retry-After in seconds honoured",
			answers:   []answer{tooMany(map[string]string{"Retry-After": "3"}), tooMany(map[string]string{"Retry-After": "3"}), ok},
			retries:   2,
			wantCalls: 3,
			wantWaits: []time.Duration{3 * time.Second, 3 * time.Second},
		},
		{
			name:      "retry-after-ms preferred to Retry-After",
			answers:   []answer{tooMany(map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}), ok},
			retries:   1,
			wantCalls: 2,
			wantWaits: []time.Duration{250 * time.Millisecond},
		},
		{
			name:       "retry count bounded, exponential backoff with jitter",
			answers:    []answer{{status: http.StatusServiceUnavailable, body: "down"}},
			retries:    3,
			wantCalls:  4,
			wantRanges: [][2]time.Duration{{375 * time.Millisecond, 500 * time.Millisecond}, {750 * time.Millisecond, time.Second}, {1500 * time.Millisecond, 2 * time.Second}},
			wantStatus: http.StatusServiceUnavailable,
		},
		{
			name:       "default of two retries",
			answers:    []answer{{status: http.StatusConflict, body: "busy"}},
			retries:    0,
			wantCalls:  3,
			wantRanges: [][2]time.Duration{{375 * time.Millisecond, 500 * time.Millisecond}, {750 * time.Millisecond, time.Second}},
			wantStatus: http.StatusConflict,
		},
		{
			name:       "no retry on 400",
			answers:    []answer{{status: http.StatusBadRequest, body: `{"error":{"message":"bad"}}`}, ok},
			retries:    3,
			wantCalls:  1,
			wantStatus: http.StatusBadRequest,
		},
		{
			name:       "no retry when the server asks for too long a wait",
			answers:    []answer{tooMany(map[string]string{"Retry-After": "600"}), ok},
			retries:    3,
			wantCalls:  1,
			wantStatus: http.StatusTooManyRequests,
		},
		{
			name:       "x-should-retry false wins over a 500",
			answers:    []answer{{status: http.StatusInternalServerError, headers: map[string]string{"X-Should-Retry": "false"}}, ok},
			retries:    3,
			wantCalls:  1,
			wantStatus: http.StatusInternalServerError,
		},
		{
			name:       "negative MaxRetries never retries",
			answers:    []answer{{status: http.StatusServiceUnavailable}, ok},
			retries:    -1,
			wantCalls:  1,
			wantStatus: http.StatusServiceUnavailable,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &flaky{answers: tt.answers}
			srv := httptest.NewServer(f)
			t.Cleanup(srv.Close)
			text, waits, err := generate(t, srv.URL+"/v1", tt.retries, nil)
			if got := f.requests(); got != tt.wantCalls {
				t.Errorf("requests = %d, want %d", got, tt.wantCalls)
			}
			if tt.wantStatus == 0 {
				if err != nil || text != "hi" {
					t.Fatalf("text %q, error %v", text, err)
				}
			} else {
				var pe *model.ProviderError
				if !errors.As(err, &pe) || pe.StatusCode != tt.wantStatus {
					t.Fatalf("error %v, want a ProviderError with HTTP %d", err, tt.wantStatus)
				}
			}
			if tt.wantRanges == nil {
				if diff := cmp.Diff(tt.wantWaits, waits); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
				return
			}
			if len(waits) != len(tt.wantRanges) {
				t.Fatalf("waits = %v, want %d", waits, len(tt.wantRanges))
			}
			for i, r := range tt.wantRanges {
				if waits[i] <= r[0] || waits[i] > r[1] {
					t.Errorf("wait %d = %v, want in (%v, %v]", i, waits[i], r[0], r[1])
				}
			}
		})
	}
}

func TestConnectionErrorsAreRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, waits, err := generate(t, "http://"+addr+"/v1", 2, nil)
	if err == nil || !strings.Contains(err.Error(), "cannot reach") {
		t.Fatalf("error %v, want cannot reach", err)
	}
	if len(waits) != 2 {
		t.Errorf("waits = %v, want 2", waits)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		headers     map[string]string
		wantD       time.Duration
		wantOK      bool
		wantTooLong bool
	}{
		{name: "none"},
		{name: "seconds", headers: map[string]string{"Retry-After": "1.5"}, wantD: 1500 * time.Millisecond, wantOK: true},
		{name: "milliseconds", headers: map[string]string{"Retry-After-Ms": "20"}, wantD: 20 * time.Millisecond, wantOK: true},
		{name: "HTTP date", headers: map[string]string{"Retry-After": now.Add(7 * time.Second).Format(http.TimeFormat)}, wantD: 7 * time.Second, wantOK: true},
		{name: "date in the past", headers: map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, wantOK: true},
		{name: "too long", headers: map[string]string{"Retry-After": "121"}, wantOK: true, wantTooLong: true},
		{name: "overflow", headers: map[string]string{"Retry-After-Ms": "1e400"}, wantOK: true, wantTooLong: true},
		{name: "negative ignored", headers: map[string]string{"Retry-After": "-1"}},
		{name: "garbage ignored", headers: map[string]string{"Retry-After": "soon"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			d, ok, tooLong := retryAfter(h, now)
			if d != tt.wantD || ok != tt.wantOK || tooLong != tt.wantTooLong {
				t.Errorf("retryAfter = %v, %v, %v; want %v, %v, %v", d, ok, tooLong, tt.wantD, tt.wantOK, tt.wantTooLong)
			}
		})
	}
}

func TestReadLimits(t *testing.T) {
	sse := map[string]string{"Content-Type": "text/event-stream"}
	tests := []struct {
		name   string
		answer answer
		want   string
	}{
		{
			name:   "oversized SSE line",
			answer: answer{status: http.StatusOK, headers: sse, body: "data: {\"x\":\"" + strings.Repeat("a", maxLineBytes) + "\"}\n\n"},
			want:   fmt.Sprintf("a streamed line is longer than %d bytes", maxLineBytes),
		},
		{
			name:   "oversized event of many data lines",
			answer: answer{status: http.StatusOK, headers: sse, body: strings.Repeat("data: "+strings.Repeat("a", 1<<20)+"\n", 17) + "\n"},
			want:   fmt.Sprintf("a streamed event is larger than %d bytes", maxLineBytes),
		},
		{
			name:   "oversized error body",
			answer: answer{status: http.StatusBadRequest, body: `{"error":{"message":"` + strings.Repeat("a", maxErrorBytes) + `"}}`},
			want:   fmt.Sprintf("HTTP 400 Bad Request: the error answer is larger than %d bytes", maxErrorBytes),
		},
		{
			name:   "error body that is not the error object",
			answer: answer{status: http.StatusBadGateway, body: "  upstream gone\n"},
			want:   "HTTP 502 Bad Gateway: upstream gone",
		},
		{
			name:   "error frame",
			answer: answer{status: http.StatusOK, headers: sse, body: "data: {\"error\":{\"message\":\"overloaded\"}}\n\n"},
			want:   "error while streaming: overloaded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&flaky{answers: []answer{tt.answer}})
			t.Cleanup(srv.Close)
			_, _, err := generate(t, srv.URL+"/v1", -1, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
			if len(err.Error()) > 1024 {
				t.Errorf("error is %d bytes long", len(err.Error()))
			}
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	ok := answer{status: http.StatusOK, headers: map[string]string{"Content-Type": "text/event-stream"}, body: okStream}
	f := &flaky{answers: []answer{ok}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	_, _, err := generate(t, srv.URL+"/v1", -1, func(o *Options) {
		o.Headers = map[string]string{"X-Tenant": "t1"}
	})
	if err != nil {
		t.Fatal(err)
	}
	h := f.headers[0]
	got := map[string]string{"Authorization": h.Get("Authorization"), "X-Tenant": h.Get("X-Tenant"),
		"Content-Type": h.Get("Content-Type"), "Accept": h.Get("Accept")}
	want := map[string]string{"Authorization": "Bearer k", "X-Tenant": "t1",
		"Content-Type": "application/json", "Accept": "text/event-stream"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}
