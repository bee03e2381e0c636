package modeltest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antlerhq/antler/model"
)

// Server is the scripted double behind an OpenAI-compatible HTTP API on
// 127.0.0.1. It embeds the [Model] that plays the script, so Requests,
// Calls and the rest report what the server received.
type Server struct {
	*Model
	// URL is the API root, ending in /v1 (what OPENAI_BASE_URL holds).
	URL string

	srv *httptest.Server

	mu     sync.Mutex
	bodies [][]byte // guarded by mu
}

// NewServer starts a server that plays turns in order. When t is
// non-nil the server is closed in t.Cleanup; otherwise call Close.
func NewServer(t testing.TB, turns ...Turn) *Server {
	return NewScriptServer(t, Script{Turns: turns})
}

// NewScriptServer starts a server that plays s. When t is non-nil the
// server is closed in t.Cleanup; otherwise call Close.
func NewScriptServer(t testing.TB, s Script) *Server {
	srv := &Server{Model: FromScript(s)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", srv.chat)
	mux.HandleFunc("POST /chat/completions", srv.chat)
	mux.HandleFunc("GET /v1/models", srv.models)
	mux.HandleFunc("GET /models", srv.models)
	srv.srv = httptest.NewServer(mux)
	srv.URL = srv.srv.URL + "/v1"
	if t != nil {
		t.Helper()
		t.Cleanup(srv.Close)
	}
	return srv
}

// Close shuts the server down, cutting open streams.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Env returns the environment that points an OpenAI-compatible client in
// another process at the server: OPENAI_BASE_URL and OPENAI_API_KEY
// (Script.APIKey, or "modeltest").
func (s *Server) Env() []string {
	key := s.script.APIKey
	if key == "" {
		key = "modeltest"
	}
	return []string{"OPENAI_BASE_URL=" + s.URL, "OPENAI_API_KEY=" + key}
}

// Bodies returns the raw JSON bodies of the chat requests received, in
// arrival order (nothing when Script.NoRecord is set).
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   []map[string]any{{"id": scriptedName, "object": "model", "created": 0, "owned_by": scriptedName}},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	var e apiError
	e.Error.Message = msg
	e.Error.Type = typ
	writeJSON(w, status, e)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	if key := s.script.APIKey; key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided.")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if !s.script.NoRecord {
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
	}
	var ar apiRequest
	if err := json.Unmarshal(body, &ar); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid JSON body: "+err.Error())
		return
	}
	req, err := ar.toRequest()
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	turn, err := s.pick(req)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	if turn.Status != 0 {
		if err := sleep(r.Context(), turn.Delay); err != nil {
			return
		}
		msg := turn.Error
		if msg == "" {
			msg = http.StatusText(turn.Status)
		}
		writeError(w, turn.Status, "server_error", msg)
		return
	}
	resp := response(turn, req)
	modelName := ar.Model
	if modelName == "" {
		modelName = scriptedName
	}
	if !ar.Stream {
		if err := sleep(r.Context(), turn.Delay); err != nil {
			return
		}
		if turn.Error != "" || turn.Disconnect {
			writeError(w, http.StatusInternalServerError, "server_error", turn.Error)
			return
		}
		writeJSON(w, http.StatusOK, completion(resp, modelName))
		return
	}
	usage := ar.StreamOptions != nil && ar.StreamOptions.IncludeUsage
	s.stream(r.Context(), w, turn, resp, modelName, usage)
}

// stream writes turn as server-sent events.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, turn Turn, resp *model.Response, modelName string, usage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	es := &eventStream{rc: http.NewResponseController(w), bw: bufio.NewWriter(w), chunkDelay: turn.ChunkDelay, model: modelName}
	if !es.flush() || sleep(ctx, turn.Delay) != nil {
		return
	}
	es.id = fmt.Sprintf("chatcmpl-%s-%d", scriptedName, time.Now().UnixNano())
	es.created = time.Now().Unix()
	if !s.sendMessage(ctx, es, turn) {
		return
	}
	if turn.Disconnect {
		// Abort the response: the connection closes without the end of
		// the chunked body, as a crashed upstream would.
		panic(http.ErrAbortHandler)
	}
	if turn.Error != "" {
		var e apiError
		e.Error.Message = turn.Error
		e.Error.Type = "server_error"
		es.send(ctx, e)
		return
	}
	if !es.sendEnd(ctx, resp, usage) {
		return
	}
	es.bw.WriteString("data: [DONE]\n\n")
	es.flush()
}

// eventStream writes the chunks of one streamed completion as
// server-sent events.
type eventStream struct {
	bw *bufio.Writer
	rc *http.ResponseController
	// chunkDelay is the pause before each chunk but the first.
	chunkDelay time.Duration
	// sent is whether a chunk was sent.
	sent bool
	// id, created and model are the completion's, repeated in each chunk.
	id      string
	created int64
	model   string
}

// flush sends what is buffered to the client; false means the client is
// gone.
func (e *eventStream) flush() bool {
	return e.bw.Flush() == nil && e.rc.Flush() == nil
}

// send writes v as one event, after the chunk delay unless it is the
// first; false means the stream ended (ctx done or client gone).
func (e *eventStream) send(ctx context.Context, v any) bool {
	if e.sent && e.chunkDelay > 0 {
		if sleep(ctx, e.chunkDelay) != nil {
			return false
		}
	}
	e.sent = true
	b, _ := json.Marshal(v)
	e.bw.WriteString("data: ")
	e.bw.Write(b)
	e.bw.WriteString("\n\n")
	return e.flush()
}

// chunk returns the completion chunk holding delta d (and the finish
// reason, if any).
func (e *eventStream) chunk(d apiDelta, finish *string) apiChunk {
	return apiChunk{ID: e.id, Object: "chat.completion.chunk", Created: e.created, Model: e.model,
		Choices: []apiChunkChoice{{Delta: d, FinishReason: finish}}}
}

// sendMessage streams turn's message: the assistant role, the reasoning
// and text in chunks of the script's size, then each tool call's head and
// argument fragments.
func (s *Server) sendMessage(ctx context.Context, es *eventStream, turn Turn) bool {
	empty := ""
	if !es.send(ctx, es.chunk(apiDelta{Role: "assistant", Content: &empty}, nil)) {
		return false
	}
	for _, c := range chunks(turn.Reasoning, s.script.ChunkSize) {
		if !es.send(ctx, es.chunk(apiDelta{ReasoningContent: c}, nil)) {
			return false
		}
	}
	for _, c := range chunks(turn.Text, s.script.ChunkSize) {
		if !es.send(ctx, es.chunk(apiDelta{Content: &c}, nil)) {
			return false
		}
	}
	for i, tc := range turn.ToolCalls {
		idx := i
		head := apiToolCall{Index: &idx, ID: tc.ID, Type: "function"}
		head.Function.Name = tc.Name
		if !es.send(ctx, es.chunk(apiDelta{ToolCalls: []apiToolCall{head}}, nil)) {
			return false
		}
		for _, frag := range argFragments(string(tc.Arguments), s.script.ChunkSize) {
			part := apiToolCall{Index: &idx}
			part.Function.Arguments = frag
			if !es.send(ctx, es.chunk(apiDelta{ToolCalls: []apiToolCall{part}}, nil)) {
				return false
			}
		}
	}
	return true
}

// sendEnd streams the finish reason of resp and, when the client asked
// for it, a chunk with the usage.
func (e *eventStream) sendEnd(ctx context.Context, resp *model.Response, usage bool) bool {
	finish := string(resp.FinishReason)
	if !e.send(ctx, e.chunk(apiDelta{}, &finish)) {
		return false
	}
	if usage {
		u := apiUsage{PromptTokens: resp.Usage.InputTokens, CompletionTokens: resp.Usage.OutputTokens, TotalTokens: resp.Usage.TotalTokens}
		c := apiChunk{ID: e.id, Object: "chat.completion.chunk", Created: e.created, Model: e.model, Choices: []apiChunkChoice{}, Usage: &u}
		if !e.send(ctx, c) {
			return false
		}
	}
	return true
}

// argFragments splits tool-call arguments the way real servers do: in
// pieces of size bytes, or in two halves when size is 0, so clients
// always have to reassemble them.
func argFragments(args string, size int) []string {
	if size > 0 {
		return chunks(args, size)
	}
	if len(args) < 2 {
		return []string{args}
	}
	return chunks(args, (len(args)+1)/2)
}

func completion(resp *model.Response, modelName string) apiCompletion {
	c := apiCompletion{ID: fmt.Sprintf("chatcmpl-%s-%d", scriptedName, time.Now().UnixNano()), Object: "chat.completion",
		Created: time.Now().Unix(), Model: modelName}
	msg := apiOutMessage{Role: "assistant", ReasoningContent: resp.Message.Reasoning}
	if resp.Message.Content != "" || len(resp.Message.ToolCalls) == 0 {
		text := resp.Message.Content
		msg.Content = &text
	}
	for i, tc := range resp.Message.ToolCalls {
		idx := i
		out := apiToolCall{Index: &idx, ID: tc.ID, Type: "function"}
		out.Function.Name = tc.Name
		out.Function.Arguments = string(tc.Arguments)
		msg.ToolCalls = append(msg.ToolCalls, out)
	}
	c.Choices = []apiChoice{{Message: msg, FinishReason: string(resp.FinishReason)}}
	c.Usage = apiUsage{PromptTokens: resp.Usage.InputTokens, CompletionTokens: resp.Usage.OutputTokens, TotalTokens: resp.Usage.TotalTokens}
	return c
}

// String describes the server for logs.
func (s *Server) String() string { return "modeltest server at " + strings.TrimSuffix(s.URL, "/v1") }
