package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/gemini"
)

// fake is a Gemini API endpoint: streamGenerateContent answers the n-th
// request with the n-th stream (the last repeats) as SSE data lines, one
// per line; models/{model} answers a model lookup. It records each
// request's path, query, key header and body.
type fake struct {
	streams []string
	status  int    // non-200: every call answers it with errBody
	errBody string // JSON error body
	block   bool   // hold the stream open after the data until the client goes

	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	path, query, key string
	body             map[string]any
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec := recorded{path: r.URL.Path, query: r.URL.RawQuery, key: r.Header.Get("X-Goog-Api-Key")}
	_ = json.Unmarshal(b, &rec.body)
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, rec)
	f.mu.Unlock()
	if f.status != 0 && f.status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		io.WriteString(w, f.errBody)
		return
	}
	switch r.URL.Path {
	case "/v1beta/models/gemini-test:streamGenerateContent":
		w.Header().Set("Content-Type", "text/event-stream")
		for _, line := range strings.Split(strings.TrimSpace(f.streams[min(n, len(f.streams)-1)]), "\n") {
			fmt.Fprintf(w, "data: %s\r\n\r\n", strings.TrimSpace(line))
		}
		w.(http.Flusher).Flush()
		if f.block {
			<-r.Context().Done()
		}
	case "/v1beta/models/gemini-test":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"name":"models/gemini-test","displayName":"Gemini Test","inputTokenLimit":1048576,"outputTokenLimit":65536}`)
	default:
		http.NotFound(w, r)
	}
}

func (f *fake) request(t *testing.T, i int) recorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.requests) {
		t.Fatalf("request %d was not made (%d made)", i, len(f.requests))
	}
	return f.requests[i]
}

func start(t *testing.T, f *fake) string {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

func newModel(t *testing.T, url string, edit func(*gemini.Options)) *gemini.Model {
	t.Helper()
	opts := gemini.Options{Name: "gem", ConfigKey: "models[2]", Model: "gemini-test", APIKey: "AIza-test",
		BaseURL: url, MaxRetries: -1, Getenv: func(string) string { return "" }}
	if edit != nil {
		edit(&opts)
	}
	m, err := gemini.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func run(ctx context.Context, m model.ChatModel, req *model.Request) ([]model.Event, error) {
	var evs []model.Event
	for ev, err := range m.Generate(ctx, req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func final(t *testing.T, evs []model.Event) *model.Response {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Response == nil {
		t.Fatalf("last event is not a response: %+v", evs)
	}
	return evs[len(evs)-1].Response
}

func hello() *model.Request {
	return &model.Request{Messages: []model.Message{model.SystemText("be brief"), model.UserText("hi")}}
}

var raw = cmp.Transformer("raw", func(r json.RawMessage) string { return string(r) })

// The shapes of the Gemini API's streamed chunks: a thought summary
// (include_thoughts), text, a function call with its thought signature,
// usage on every chunk, the finish reason on the last.
const (
	textStream = `
{"candidates":[{"content":{"parts":[{"text":"**Greeting** The user says hi.","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":8,"totalTokenCount":8},"modelVersion":"gemini-test","responseId":"r1"}
{"candidates":[{"content":{"parts":[{"text":"Hello"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":1,"totalTokenCount":20,"thoughtsTokenCount":11},"modelVersion":"gemini-test","responseId":"r1"}
{"candidates":[{"content":{"parts":[{"text":" there!"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":3,"totalTokenCount":22,"thoughtsTokenCount":11},"modelVersion":"gemini-test","responseId":"r1"}
`
	callStream = `
{"candidates":[{"content":{"parts":[{"functionCall":{"name":"ls","args":{"path":"/mnt/user-data"}},"thoughtSignature":"c2lnLWxz"},{"functionCall":{"id":"fc-2","name":"read_file","args":{"path":"/mnt/user-data/uploads/a.txt"}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":12,"totalTokenCount":52},"modelVersion":"gemini-test","responseId":"r2"}
`
)

func TestGenerateStream(t *testing.T) {
	f := &fake{streams: []string{textStream}}
	m := newModel(t, start(t, f), nil)
	evs, err := run(t.Context(), m, hello())
	if err != nil {
		t.Fatal(err)
	}
	resp := final(t, evs)
	var deltas []string
	for _, ev := range evs[:len(evs)-1] {
		deltas = append(deltas, ev.ReasoningDelta+"|"+ev.TextDelta)
	}
	if diff := cmp.Diff([]string{"**Greeting** The user says hi.|", "|Hello", "| there!"}, deltas); diff != "" {
		t.Errorf("deltas (reasoning|text) (-want +got):\n%s", diff)
	}
	wantUsage := model.Usage{InputTokens: 8, OutputTokens: 14, TotalTokens: 22}
	want := &model.Response{
		Message: model.Message{Role: model.RoleAssistant, Content: "Hello there!",
			Reasoning: "**Greeting** The user says hi.", Usage: &wantUsage},
		Usage: wantUsage, FinishReason: model.FinishStop,
		Metadata: map[string]any{model.MetaFinishReason: "STOP"},
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	rec := f.request(t, 0)
	if rec.key != "AIza-test" || rec.query != "alt=sse" {
		t.Errorf("key = %q, query = %q", rec.key, rec.query)
	}
}

func TestToolCallsAndSignatureRoundTrip(t *testing.T) {
	f := &fake{streams: []string{callStream, textStream}}
	m := newModel(t, start(t, f), nil)
	req := hello()
	req.Tools = []model.ToolDefinition{
		{Name: "ls", Description: "List a directory.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "read_file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	}
	evs, err := run(t.Context(), m, req)
	if err != nil {
		t.Fatal(err)
	}
	resp := final(t, evs)
	calls := resp.Message.ToolCalls
	if len(calls) != 2 || !strings.HasPrefix(calls[0].ID, "call_") {
		t.Fatalf("calls = %+v", calls)
	}
	want := []model.ToolCall{
		{ID: calls[0].ID, Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt/user-data"}`), Signature: "c2lnLWxz"},
		{ID: "fc-2", Name: "read_file", Arguments: json.RawMessage(`{"path":"/mnt/user-data/uploads/a.txt"}`)},
	}
	if diff := cmp.Diff(want, calls, raw); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if resp.FinishReason != model.FinishToolCalls {
		t.Errorf("finish = %q", resp.FinishReason)
	}
	var deltaNames []string
	for _, ev := range evs {
		if d := ev.ToolCallDelta; d != nil {
			deltaNames = append(deltaNames, fmt.Sprintf("%d:%s", d.Index, d.Name))
		}
	}
	if diff := cmp.Diff([]string{"0:ls", "1:read_file"}, deltaNames); diff != "" {
		t.Errorf("tool call deltas (-want +got):\n%s", diff)
	}

	// The tools as declared.
	body := f.request(t, 0).body
	wantTools := []any{map[string]any{"functionDeclarations": []any{
		map[string]any{"name": "ls", "description": "List a directory.", "parametersJsonSchema": map[string]any{
			"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}},
		map[string]any{"name": "read_file", "parametersJsonSchema": map[string]any{
			"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}},
	}}}
	if diff := cmp.Diff(wantTools, body["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	// The next turn sends the calls back with their signature and the
	// two results as one user turn of function responses.
	req.Messages = append(req.Messages, resp.Message,
		model.Message{Role: model.RoleTool, ToolCallID: calls[0].ID, Name: "ls", Content: "uploads"},
		model.Message{Role: model.RoleTool, ToolCallID: "fc-2", Content: "Error: no such file", Status: "error"})
	if _, err := run(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	body = f.request(t, 1).body
	wantContents := []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}},
		map[string]any{"role": "model", "parts": []any{
			map[string]any{"functionCall": map[string]any{"id": calls[0].ID, "name": "ls", "args": map[string]any{"path": "/mnt/user-data"}}, "thoughtSignature": "c2lnLWxz"},
			map[string]any{"functionCall": map[string]any{"id": "fc-2", "name": "read_file", "args": map[string]any{"path": "/mnt/user-data/uploads/a.txt"}}},
		}},
		map[string]any{"role": "user", "parts": []any{
			map[string]any{"functionResponse": map[string]any{"id": calls[0].ID, "name": "ls", "response": map[string]any{"output": "uploads"}}},
			map[string]any{"functionResponse": map[string]any{"id": "fc-2", "name": "read_file", "response": map[string]any{"error": "Error: no such file"}}},
		}},
	}
	if diff := cmp.Diff(wantContents, body["contents"]); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
	wantSystem := map[string]any{"role": "user", "parts": []any{map[string]any{"text": "be brief"}}}
	if diff := cmp.Diff(wantSystem, body["systemInstruction"]); diff != "" {
		t.Errorf("systemInstruction (-want +got):\n%s", diff)
	}
}

func TestGenerationConfig(t *testing.T) {
	temp, topP, override := 0.4, 0.9, 0.1
	budget, off, yes := 2048, 0, true
	tests := []struct {
		name string
		opts func(*gemini.Options)
		req  func(*model.Request)
		want map[string]any
	}{
		{"nothing set", nil, nil, map[string]any{}},
		{"options", func(o *gemini.Options) {
			o.MaxTokens, o.Temperature, o.TopP = 8192, &temp, &topP
			o.Thinking = gemini.Thinking{Budget: &budget, IncludeThoughts: &yes}
		}, nil, map[string]any{"maxOutputTokens": 8192.0, "temperature": 0.4, "topP": 0.9,
			"thinkingConfig": map[string]any{"thinkingBudget": 2048.0, "includeThoughts": true}}},
		{"request overrides", func(o *gemini.Options) { o.MaxTokens, o.Temperature = 8192, &temp },
			func(r *model.Request) { r.MaxTokens, r.Temperature = 100, &override },
			map[string]any{"maxOutputTokens": 100.0, "temperature": 0.1}},
		{"thinking off when not asked", func(o *gemini.Options) {
			o.SupportsThinking = true
			o.ThinkingOn = gemini.Thinking{Budget: &budget, IncludeThoughts: &yes}
			o.ThinkingOff = gemini.Thinking{Budget: &off}
		}, nil, map[string]any{"thinkingConfig": map[string]any{"thinkingBudget": 0.0}}},
		{"thinking on when asked", func(o *gemini.Options) {
			o.SupportsThinking = true
			o.ThinkingOn = gemini.Thinking{Level: "high", IncludeThoughts: &yes}
			o.ThinkingOff = gemini.Thinking{Budget: &off}
		}, func(r *model.Request) { r.Thinking = true },
			map[string]any{"thinkingConfig": map[string]any{"thinkingLevel": "HIGH", "includeThoughts": true}}},
		{"toggles ignored without supports_thinking", func(o *gemini.Options) {
			o.ThinkingOff = gemini.Thinking{Budget: &off}
		}, nil, map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{streams: []string{textStream}}
			m := newModel(t, start(t, f), tt.opts)
			req := hello()
			if tt.req != nil {
				tt.req(req)
			}
			if _, err := run(t.Context(), m, req); err != nil {
				t.Fatal(err)
			}
			got, _ := f.request(t, 0).body["generationConfig"].(map[string]any)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("generationConfig (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinishReasons(t *testing.T) {
	tests := []struct {
		chunk string
		want  model.FinishReason
		meta  string
	}{
		{`{"candidates":[{"content":{"parts":[{"text":"cut"}],"role":"model"},"finishReason":"MAX_TOKENS","index":0}]}`, model.FinishLength, "MAX_TOKENS"},
		{`{"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"},"finishReason":"SAFETY","index":0}]}`, model.FinishSafety, "SAFETY"},
		{`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":3,"totalTokenCount":3}}`, model.FinishSafety, "PROHIBITED_CONTENT"},
	}
	for _, tt := range tests {
		t.Run(tt.meta, func(t *testing.T) {
			m := newModel(t, start(t, &fake{streams: []string{tt.chunk}}), nil)
			evs, err := run(t.Context(), m, hello())
			if err != nil {
				t.Fatal(err)
			}
			resp := final(t, evs)
			if resp.FinishReason != tt.want || resp.Metadata[model.MetaFinishReason] != tt.meta {
				t.Errorf("finish = %q, metadata = %v; want %q, %q", resp.FinishReason, resp.Metadata, tt.want, tt.meta)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"bad key", 400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`,
			`model "gem" (gemini): HTTP 400 Bad Request: API key not valid. Please pass a valid API key.; check gemini_api_key or GEMINI_API_KEY`},
		{"unknown model", 404, `{"error":{"code":404,"message":"models/gemini-test is not found for API version v1beta","status":"NOT_FOUND"}}`,
			`model "gem" (gemini): HTTP 404 Not Found: models/gemini-test is not found for API version v1beta; check model "gemini-test"`},
		{"overloaded", 503, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`,
			`model "gem" (gemini): HTTP 503 Service Unavailable: The model is overloaded. Please try again later.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, start(t, &fake{status: tt.status, errBody: tt.body}), nil)
			_, err := run(t.Context(), m, hello())
			var pe *model.ProviderError
			if !errors.As(err, &pe) || err.Error() != tt.want {
				t.Errorf("error = %v\nwant    %s", err, tt.want)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	f := &fake{status: 503, errBody: `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`}
	m := newModel(t, start(t, f), func(o *gemini.Options) { o.MaxRetries = 1 })
	if _, err := run(t.Context(), m, hello()); err == nil {
		t.Fatal("no error")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 2 {
		t.Errorf("%d requests, want 2 (one retry)", len(f.requests))
	}
}

func TestMissingAPIKey(t *testing.T) {
	m, err := gemini.New(gemini.Options{Name: "gem", ConfigKey: "models[2]", Model: "gemini-test",
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	want := `model "gem" (gemini): no API key; set GEMINI_API_KEY or gemini_api_key in models[2]`
	if _, err := run(t.Context(), m, hello()); err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	if err := m.Ping(t.Context()); err == nil || err.Error() != want {
		t.Errorf("Ping error = %v, want %q", err, want)
	}
}

func TestKeyAndBaseURLFromEnvironment(t *testing.T) {
	f := &fake{streams: []string{textStream}}
	env := map[string]string{"GEMINI_API_KEY": "AIza-env", "GOOGLE_GEMINI_BASE_URL": start(t, f)}
	m, err := gemini.New(gemini.Options{Name: "gem", Model: "gemini-test", MaxRetries: -1,
		Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t.Context(), m, hello()); err != nil {
		t.Fatal(err)
	}
	if got := f.request(t, 0).key; got != "AIza-env" {
		t.Errorf("key = %q", got)
	}
}

func TestPing(t *testing.T) {
	f := &fake{}
	m := newModel(t, start(t, f), nil)
	if err := m.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := f.request(t, 0).path; got != "/v1beta/models/gemini-test" {
		t.Errorf("path = %q", got)
	}
}

func TestCancellation(t *testing.T) {
	f := &fake{streams: []string{`{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}]}`}, block: true}
	m := newModel(t, start(t, f), nil)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := run(ctx, m, hello())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := gemini.New(gemini.Options{Model: "m", BaseURL: "localhost:1", APIKey: "k"}); err == nil {
		t.Error("base_url without scheme accepted")
	}
	if _, err := gemini.New(gemini.Options{APIKey: "k"}); err == nil {
		t.Error("empty model accepted")
	}
}

// TestBrokenStream cuts the connection after the first chunk: the error
// names the model and the SDK's own logger stays silent (its line would
// land on the user's terminal).
func TestBrokenStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":\"model\"},\"index\":0}]}\r\n\r\n")
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	var logged strings.Builder
	log.SetOutput(&logged)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })

	evs, err := run(t.Context(), newModel(t, srv.URL, nil), hello())
	var pe *model.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), `model "gem" (gemini): the stream broke`) {
		t.Fatalf("error = %v", err)
	}
	if len(evs) != 1 || evs[0].TextDelta != "Hel" {
		t.Errorf("events before the break = %+v", evs)
	}
	if logged.Len() > 0 {
		t.Errorf("the SDK logged %q", logged.String())
	}
}
