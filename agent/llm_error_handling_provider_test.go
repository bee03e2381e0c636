package agent_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/openai"
	"github.com/antlerhq/antler/tool"
)

// answerSSE is a streamed chat-completions answer of text with a finish
// reason.
func answerSSE(text, finish string) string {
	return fmt.Sprintf("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n"+
		"data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%q}]}\n\ndata: [DONE]\n\n", text, finish)
}

// httpAnswer is one scripted answer of the test server.
type httpAnswer struct {
	status int
	header map[string]string
	body   string
}

// The real OpenAI-compatible provider (its own retries off) against a
// local server: the provider's Retry-After and error code reach the
// middleware, which waits as told, or classifies the code as DeerFlow
// does; a length-capped answer then ends the run as model_length_capped.
func TestLLMErrorHandling_openAIProvider(t *testing.T) {
	rateLimited := httpAnswer{429, map[string]string{"Retry-After": "2"},
		`{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`}
	burst := httpAnswer{429, nil, `{"error":{"message":"Too many requests","code":"limit_burst_rate"}}`}
	badKey := httpAnswer{401, nil, `{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}`}
	cut := httpAnswer{200, map[string]string{"Content-Type": "text/event-stream"}, answerSSE("The report starts", "length")}
	for _, tc := range []struct {
		name         string
		answers      []httpAnswer
		wantRequests int
		wantWaits    []time.Duration
		wantReason   agent.StopReason
		wantText     string
		wantErrKind  string
	}{
		{"Retry-After honoured, then a length cap", []httpAnswer{rateLimited, cut}, 2, []time.Duration{2 * time.Second},
			agent.StopModelLengthCapped, "The report starts", ""},
		{"an empty stream is retried", []httpAnswer{{200, map[string]string{"Content-Type": "text/event-stream"}, "data: [DONE]\n\n"}, cut},
			2, []time.Duration{time.Second}, agent.StopModelLengthCapped, "The report starts", ""},
		{"a burst-rate code", []httpAnswer{burst, burst}, 2, []time.Duration{5 * time.Second},
			agent.StopError, burstText, "burst_rate"},
		{"an invalid key", []httpAnswer{badKey}, 1, nil, agent.StopError, authText, "auth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				i := n
				n++
				mu.Unlock()
				if i >= len(tc.answers) {
					http.Error(w, `{"error":{"message":"no more answers"}}`, http.StatusBadRequest)
					return
				}
				a := tc.answers[i]
				for k, v := range a.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(a.status)
				fmt.Fprint(w, a.body)
			}))
			defer srv.Close()
			chat, err := openai.New(openai.Options{Name: "m", Model: "gpt", APIKey: "k", BaseURL: srv.URL + "/v1", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			s := &sleeps{}
			mws := []tool.ModelMiddleware{
				agent.LLMErrorHandling(agent.LLMErrorHandlingOptions{ModelName: "m", Sleep: s.sleep, Jitter: lowJitter}),
				agent.ModelLengthFinishReason(),
			}
			out, err := newAgent(t, agent.Options{Model: chat, ModelMiddlewares: mws}).Invoke(t.Context(),
				agent.Input{Messages: []model.Message{model.UserText("write")}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.wantRequests {
				t.Errorf("requests = %d, want %d", n, tc.wantRequests)
			}
			if diff := cmp.Diff(tc.wantWaits, s.d); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			last := lastAssistant(t, out)
			if out.Reason != tc.wantReason || last.Content != tc.wantText || last.Meta[agent.MetaErrorReason] != nilIfEmpty(tc.wantErrKind) {
				t.Errorf("outcome %s, answer %q, meta %v", out.Reason, last.Content, last.Meta)
			}
		})
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
