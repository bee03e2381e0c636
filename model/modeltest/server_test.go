package modeltest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/model/openai"
)

func post(t *testing.T, url, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// dataLines returns the payloads of the SSE data lines of a response.
func dataLines(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, s)
		}
	}
	return out
}

func TestServerStreamsToolCallsWithIndices(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{
		Text: "Checking.",
		ToolCalls: []model.ToolCall{
			{ID: "call_a", Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt"}`)},
			{ID: "call_b", Name: "glob", Arguments: json.RawMessage(`{"pattern":"*.go"}`)},
		},
		Usage: &model.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7},
	})
	resp := post(t, srv.URL, "", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	lines := dataLines(t, resp.Body)
	if len(lines) == 0 || lines[len(lines)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %q", lines)
	}
	type call struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct{ Name, Arguments string }
	}
	var (
		text    string
		finish  []string
		usage   []map[string]int
		idsByIx = map[int]string{}
		argsBy  = map[int]string{}
		names   = map[int]string{}
	)
	for _, l := range lines[:len(lines)-1] {
		var c struct {
			Choices []struct {
				Delta struct {
					Content   *string `json:"content"`
					ToolCalls []call  `json:"tool_calls"`
				}
				FinishReason *string `json:"finish_reason"`
			}
			Usage map[string]int
		}
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("chunk %s: %v", l, err)
		}
		if c.Usage != nil {
			usage = append(usage, c.Usage)
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				text += *ch.Delta.Content
			}
			if ch.FinishReason != nil {
				finish = append(finish, *ch.FinishReason)
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == nil {
					t.Fatalf("tool call delta without index: %s", l)
				}
				if tc.ID != "" {
					idsByIx[*tc.Index] = tc.ID
				}
				names[*tc.Index] += tc.Function.Name
				argsBy[*tc.Index] += tc.Function.Arguments
			}
		}
	}
	if text != "Checking." {
		t.Errorf("text %q", text)
	}
	if diff := cmp.Diff([]string{"tool_calls"}, finish); diff != "" {
		t.Errorf("finish reasons (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int]string{0: "call_a", 1: "call_b"}, idsByIx); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int]string{0: "ls", 1: "glob"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int]string{0: `{"path":"/mnt"}`, 1: `{"pattern":"*.go"}`}, argsBy); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]map[string]int{{"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}, usage); diff != "" {
		t.Errorf("usage chunks (-want +got):\n%s", diff)
	}
}

func TestServerNonStreamAndModels(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "c", Name: "ls"}}})
	resp := post(t, srv.URL, "", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	var c struct {
		Choices []struct {
			Message struct {
				Content   *string
				ToolCalls []struct {
					ID       string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if len(c.Choices) != 1 || c.Choices[0].FinishReason != "tool_calls" || c.Choices[0].Message.Content != nil ||
		len(c.Choices[0].Message.ToolCalls) != 1 || c.Choices[0].Message.ToolCalls[0].Function.Arguments != "{}" {
		t.Errorf("unexpected completion %+v", c)
	}

	mr, err := http.Get(srv.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Body.Close()
	var list struct{ Data []struct{ ID string } }
	if err := json.NewDecoder(mr.Body).Decode(&list); err != nil || len(list.Data) != 1 || list.Data[0].ID != "modeltest" {
		t.Errorf("models: %+v, %v", list, err)
	}
}

func TestServerErrors(t *testing.T) {
	tests := []struct {
		name       string
		script     modeltest.Script
		key        string
		wantStatus int
		wantMsg    string
	}{
		{name: "api key required", script: modeltest.Script{APIKey: "k", Turns: []modeltest.Turn{{Text: "x"}}},
			key: "wrong", wantStatus: 401, wantMsg: "Incorrect API key provided."},
		{name: "scripted status", script: modeltest.Script{Turns: []modeltest.Turn{{Status: 503, Error: "down"}}},
			wantStatus: 503, wantMsg: "down"},
		{name: "exhausted", script: modeltest.Script{}, wantStatus: 500, wantMsg: "modeltest: script exhausted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewScriptServer(t, tt.script)
			resp := post(t, srv.URL, tt.key, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			var e struct{ Error struct{ Message string } }
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || !strings.HasPrefix(e.Error.Message, tt.wantMsg) {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, e.Error.Message, tt.wantStatus, tt.wantMsg)
			}
		})
	}
}

func TestServerEnv(t *testing.T) {
	srv := modeltest.NewScriptServer(t, modeltest.Script{APIKey: "secret"})
	want := []string{"OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=secret"}
	if diff := cmp.Diff(want, srv.Env()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") || !strings.HasSuffix(srv.URL, "/v1") {
		t.Errorf("URL %q", srv.URL)
	}
}

// TestServerRulesUnderLoad runs many conversations at once against one
// rules-driven server through the real OpenAI provider.
func TestServerRulesUnderLoad(t *testing.T) {
	srv := modeltest.NewScriptServer(t, modeltest.Script{NoRecord: true, ChunkSize: 5, Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Reply: modeltest.Turn{ToolCalls: []model.ToolCall{
			{Name: "echo", Arguments: json.RawMessage(`{"text":"{last}"}`)}}}},
		{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: "echoed {last}"}},
	}})
	m, err := openai.New(openai.Options{Name: "load", Model: "m", APIKey: "k", BaseURL: srv.URL, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	const runs = 40
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			who := fmt.Sprintf("thread-%d", i)
			req := &model.Request{Messages: []model.Message{model.UserText(who)}}
			r1, err := model.Collect(t.Context(), m, req, nil)
			if err != nil {
				t.Error(err)
				return
			}
			tc := r1.Message.ToolCalls[0]
			var args struct{ Text string }
			if err := json.Unmarshal(tc.Arguments, &args); err != nil || args.Text != who {
				t.Errorf("%s: arguments %s", who, tc.Arguments)
				return
			}
			req.Messages = append(req.Messages, r1.Message,
				model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: args.Text})
			r2, err := model.Collect(t.Context(), m, req, nil)
			if err != nil {
				t.Error(err)
				return
			}
			if want := "echoed " + who; r2.Message.Content != want {
				t.Errorf("got %q, want %q", r2.Message.Content, want)
			}
		})
	}
	wg.Wait()
	if got := srv.Calls(); got != 2*runs {
		t.Errorf("server saw %d calls, want %d", got, 2*runs)
	}
}
