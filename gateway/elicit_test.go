package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/gateway"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// bookingSchema is the form the asker's book tool requests.
var bookingSchema = map[string]any{
	"type": "object", "required": []any{"date", "vip"},
	"properties": map[string]any{
		"date":  map[string]any{"type": "string", "format": "date", "title": "Date"},
		"seats": map[string]any{"type": "integer", "minimum": 1, "maximum": 8, "default": 2, "description": "How many"},
		"room":  map[string]any{"type": "string", "enum": []any{"red", "blue"}, "enumNames": []any{"Red room", "Blue room"}},
		"vip":   map[string]any{"type": "boolean", "title": "VIP"},
	},
}

// askerServer is a real MCP server over streamable HTTP on 127.0.0.1
// whose tools elicit while they run: book (a form), confirm (a form
// without fields) and visit (url mode). Each returns the result it got,
// as JSON.
func askerServer(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	add := func(name string, params *mcp.ElicitParams) {
		srv.AddTool(&mcp.Tool{Name: name, Description: "Asks the user.", InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				res, err := req.Session.Elicit(ctx, params)
				if err != nil {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicit: " + err.Error()}}}, nil
				}
				b, _ := json.Marshal(res)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
			})
	}
	add("book", &mcp.ElicitParams{Message: "Which booking?", RequestedSchema: bookingSchema})
	add("confirm", &mcp.ElicitParams{Message: "Delete the old bookings?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
	add("visit", &mcp.ElicitParams{Mode: "url", Message: "Sign in to the booking site.", URL: "https://booking.example/login?state=abc", ElicitationID: "e1"})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// elicitEnv is a gateway whose model calls the asker's tool and then
// says what the tool returned.
func elicitEnv(t *testing.T, toolName string, opts func(*gateway.Options)) *env {
	t.Helper()
	m := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "call_1", Name: "asker_" + toolName, Arguments: json.RawMessage(`{}`)}}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			return modeltest.Turn{Text: "The tool said: " + modeltest.LastMessage(req).Content}
		}},
	)
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"asker": map[string]any{"enabled": true, "type": "http", "url": askerServer(t)}}, "skills": map[string]any{}})
	return newEnv(t, envOptions{model: m, elicit: true, extensions: string(ext), gateway: opts})
}

// askUntilCard starts the run and reads its stream, which ends with the
// card of the call callID ("*": any) while the run waits; it returns the
// run id and the card message.
func (e *env) askUntilCard(tid, callID string) (string, map[string]any) {
	e.t.Helper()
	resp := e.startStream(tid, "", runBody(tid, humanInput("Book it", nil)))
	rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tid)
	tr, err := readAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		e.t.Fatal(err)
	}
	if !tr.Ended {
		e.t.Fatal("the stream did not end with an end frame while the run waits")
	}
	msgs := messagesOf(tr.Last())
	card := msgs[len(msgs)-1]
	if card["type"] != "tool" || card["name"] != "ask_clarification" || (callID != "*" && card["tool_call_id"] != callID) {
		e.t.Fatalf("last message of the stream = %v", card)
	}
	if streamed := tr.Messages[card["id"].(string)]; streamed == nil {
		e.t.Errorf("the card was not streamed as a messages frame")
	}
	return rid, card
}

// humanInputOf is a card's human_input payload.
func humanInputOf(card map[string]any) map[string]any {
	return card["artifact"].(map[string]any)["human_input"].(map[string]any)
}

// elicitAnswer is the frontend's hidden answer to a card.
func elicitAnswer(hi map[string]any, kind, optionID, value string) map[string]any {
	resp := map[string]any{"version": 1, "kind": "human_input_response", "source": hi["source"],
		"request_id": hi["request_id"], "response_kind": kind, "value": value}
	if optionID != "" {
		resp["option_id"] = optionID
	}
	return humanInput(`For your clarification "`+hi["question"].(string)+`", my answer is: `+value,
		map[string]any{"hide_from_ui": true, "human_input_response": resp})
}

// answerCard sends an answer and reads the stream that continues the
// waiting run; it returns the final text of the run.
func (e *env) answerCard(tid, rid string, msg map[string]any) string {
	e.t.Helper()
	resp := e.startStream(tid, "", runBody(tid, msg))
	tr, err := readAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		e.t.Fatal(err)
	}
	if tr.Metadata["run_id"] != rid {
		e.t.Errorf("the answer's stream is of run %v, want the waiting run %s", tr.Metadata["run_id"], rid)
	}
	e.waitRun(tid, rid, "success")
	msgs := messagesOf(tr.Last())
	return msgs[len(msgs)-1]["content"].(string)
}

// TestElicitation_formRoundTrip: a form-mode elicitation of an MCP tool
// reaches the frontend as its clarification card (a form with the
// schema's fields), the stream ends while the run waits, the card is in
// the thread's history, state and messages page, and the frontend's
// answer (a new run request) reaches the server with the values typed
// and checked, and streams the rest of the waiting run.
func TestElicitation_formRoundTrip(t *testing.T) {
	e := elicitEnv(t, "book", nil)
	tid := uuid.NewString()
	rid, card := e.askUntilCard(tid, "call_1")

	hi := humanInputOf(card)
	want := map[string]any{
		"version": float64(2), "kind": "human_input_request", "source": gateway.ElicitationSource,
		"request_id": hi["request_id"], "tool_call_id": "call_1", "clarification_type": "missing_info",
		"title": "MCP server asker", "question": "Which booking?", "input_mode": "form", "context": hi["context"],
		"fields": []any{
			map[string]any{"name": "date", "label": "Date", "type": "date", "required": true},
			map[string]any{"name": "vip", "label": "VIP", "type": "checkbox", "required": false},
			map[string]any{"name": "room", "label": "room", "type": "select", "required": false, "options": []any{
				map[string]any{"id": "option-1", "label": "Red room", "value": "red"},
				map[string]any{"id": "option-2", "label": "Blue room", "value": "blue"}}},
			map[string]any{"name": "seats", "label": "seats", "type": "number", "required": false, "placeholder": "How many; default: 2"},
		},
	}
	if diff := cmp.Diff(want, hi); diff != "" {
		t.Errorf("card (-want +got):\n%s", diff)
	}
	if id, _ := hi["request_id"].(string); !strings.HasPrefix(id, "mcp_elicitation:") || card["id"] != id {
		t.Errorf("request id %q, message id %v", id, card["id"])
	}
	if ctx, _ := hi["context"].(string); !strings.Contains(ctx, `"decline"`) {
		t.Errorf("the context does not say how to refuse: %q", ctx)
	}

	// While it waits: the run runs, and a reload shows the card.
	var rn map[string]any
	e.json("GET", "/api/threads/"+tid+"/runs/"+rid, "", nil, 200, &rn)
	if rn["status"] != "running" {
		t.Errorf("run status while waiting = %v", rn["status"])
	}
	var hist []map[string]any
	e.json("POST", "/api/threads/"+tid+"/history", "", map[string]any{"limit": 1}, 200, &hist)
	if got := lastMessage(hist[0]["values"].(map[string]any)); got["id"] != card["id"] {
		t.Errorf("newest history entry ends with %v, want the card", got["id"])
	}
	var state map[string]any
	e.json("GET", "/api/threads/"+tid+"/state", "", nil, 200, &state)
	if got := lastMessage(state["values"].(map[string]any)); got["id"] != card["id"] {
		t.Errorf("state ends with %v, want the card", got["id"])
	}
	var page struct {
		Data []map[string]any `json:"data"`
	}
	e.json("GET", "/api/threads/"+tid+"/messages/page", "", nil, 200, &page)
	if got := page.Data[len(page.Data)-1]["content"].(map[string]any); got["id"] != card["id"] {
		t.Errorf("messages page ends with %v, want the card", got["id"])
	}

	// A value outside the schema is refused; the card still waits.
	bad := elicitAnswer(hi, "text", "", `Date: 2026-01-02; seats: 99 [values: {"date":"2026-01-02","seats":"99","vip":false}]`)
	resp := e.do("POST", "/api/threads/"+tid+"/runs/stream", "", runBody(tid, bad))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), "at most 8") {
		t.Errorf("bad answer: status %d: %s", resp.StatusCode, body)
	}

	good := elicitAnswer(hi, "text", "", `Date: 2026-01-02; room: blue; seats: 3; VIP: yes [values: {"date":"2026-01-02","room":"blue","seats":"3","vip":true}]`)
	got := e.answerCard(tid, rid, good)
	if want := `The tool said: {"action":"accept","content":{"date":"2026-01-02","room":"blue","seats":3,"vip":true}}`; got != want {
		t.Errorf("final answer = %q, want %q", got, want)
	}
	e.json("GET", "/api/threads/"+tid+"/state", "", nil, 200, &state)
	for _, m := range state["values"].(map[string]any)["messages"].([]any) {
		if m.(map[string]any)["id"] == card["id"] {
			t.Errorf("the answered card is still in the state")
		}
	}
}

// lastMessage is the last message of a values object.
func lastMessage(values map[string]any) map[string]any {
	msgs := values["messages"].([]any)
	return msgs[len(msgs)-1].(map[string]any)
}

// TestElicitation_answers: the other answers reach the server as MCP
// defines them: decline and cancel through a card's options or a plain
// message (a visible message on the thread answers its newest card), a
// confirmation's accept with empty content, a url-mode card (the address
// shown, never opened) accepted once the human is done.
func TestElicitation_answers(t *testing.T) {
	tests := []struct {
		name, tool string
		answer     func(hi map[string]any) map[string]any
		want       string
	}{
		{"a confirmation declined by its option", "confirm",
			func(hi map[string]any) map[string]any { return elicitAnswer(hi, "option", "decline", "decline") },
			`{"action":"decline"}`},
		{"a confirmation accepted", "confirm",
			func(hi map[string]any) map[string]any { return elicitAnswer(hi, "option", "accept", "accept") },
			`{"action":"accept"}`}, // an empty content is left out
		{"a form declined by a plain message", "book",
			func(map[string]any) map[string]any { return humanInput("decline", nil) },
			`{"action":"decline"}`},
		{"a form cancelled by a plain message", "book",
			func(map[string]any) map[string]any { return humanInput("Cancel.", nil) },
			`{"action":"cancel"}`},
		{"a url visited", "visit",
			func(hi map[string]any) map[string]any { return elicitAnswer(hi, "option", "accept", "accept") },
			`{"action":"accept"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := elicitEnv(t, tt.tool, nil)
			tid := uuid.NewString()
			rid, card := e.askUntilCard(tid, "call_1")
			hi := humanInputOf(card)
			if tt.tool != "book" {
				if hi["input_mode"] != "single_choice" || len(hi["options"].([]any)) != 3 {
					t.Errorf("choice card = %v", hi)
				}
			}
			if tt.tool == "visit" {
				if ctx, _ := hi["context"].(string); !strings.Contains(ctx, "https://booking.example/login?state=abc") || !strings.Contains(ctx, "opens nothing") {
					t.Errorf("url card context = %q", ctx)
				}
			}
			if got := e.answerCard(tid, rid, tt.answer(hi)); got != "The tool said: "+tt.want {
				t.Errorf("final answer = %q, want the server to get %s", got, tt.want)
			}
		})
	}
}

// TestElicitation_timeoutCancels: a card nobody answers within
// ElicitationTimeout is withdrawn and the server gets "cancel"; the run
// goes on and ends, and a late answer fails with 409 naming why (and the
// replicas), instead of hanging or starting a run.
func TestElicitation_timeoutCancels(t *testing.T) {
	e := elicitEnv(t, "confirm", func(o *gateway.Options) { o.ElicitationTimeout = time.Millisecond })
	tid := uuid.NewString()
	resp := e.startStream(tid, "", runBody(tid, humanInput("Book it", nil)))
	rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tid)
	tr, err := readAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var card map[string]any
	for _, v := range tr.Values {
		for _, m := range messagesOf(v) {
			if m["name"] == "ask_clarification" {
				card = m
			}
		}
	}
	if card == nil {
		t.Fatal("no card was shown")
	}
	e.waitRun(tid, rid, "success")
	var state map[string]any
	e.json("GET", "/api/threads/"+tid+"/state", "", nil, 200, &state)
	if got := lastMessage(state["values"].(map[string]any))["content"]; got != `The tool said: {"action":"cancel"}` {
		t.Errorf("final answer = %q", got)
	}
	late := elicitAnswer(humanInputOf(card), "option", "accept", "accept")
	resp = e.do("POST", "/api/threads/"+tid+"/runs/stream", "", runBody(tid, late))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "timed out") || !strings.Contains(string(body), "replica") {
		t.Errorf("late answer: status %d: %s", resp.StatusCode, body)
	}
}

// TestElicitation_cancelRunEndsTheWait: cancelling the waiting run ends
// the MCP call and withdraws the card.
func TestElicitation_cancelRunEndsTheWait(t *testing.T) {
	e := elicitEnv(t, "book", nil)
	tid := uuid.NewString()
	rid, card := e.askUntilCard(tid, "call_1")
	if got := e.status("POST", "/api/threads/"+tid+"/runs/"+rid+"/cancel?wait=1", "", nil); got != http.StatusNoContent {
		t.Fatalf("cancel: status %d", got)
	}
	e.waitRun(tid, rid, "interrupted")
	var state map[string]any
	e.json("GET", "/api/threads/"+tid+"/state", "", nil, 200, &state)
	for _, m := range state["values"].(map[string]any)["messages"].([]any) {
		if m.(map[string]any)["id"] == card["id"] {
			t.Errorf("the card of a cancelled run is still shown")
		}
	}
}

// TestElicitation_answerElsewhereFails: an answer reaching a gateway that
// does not hold the question (another replica) fails at once with 409.
func TestElicitation_answerElsewhereFails(t *testing.T) {
	e := elicitEnv(t, "book", nil)
	tid := uuid.NewString()
	_, card := e.askUntilCard(tid, "call_1")
	other := newEnv(t, envOptions{})
	answer := elicitAnswer(humanInputOf(card), "text", "", `Date: 2026-01-02 [values: {"date":"2026-01-02","vip":false}]`)
	resp := other.do("POST", "/api/threads/"+tid+"/runs/stream", "", runBody(tid, answer))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "another gateway replica") {
		t.Errorf("answer on another gateway: status %d: %s", resp.StatusCode, body)
	}
}

// TestElicitation_perRunBound: beyond MaxElicitationsPerRun questions
// waiting in one run, more are declined at once: of two parallel calls
// that both ask, with a bound of 1, one waits for its card and the
// other's server gets "decline" (the card is answered only after that,
// so that both questions were asked while the first waited).
func TestElicitation_perRunBound(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	declined := make(chan struct{}, 2)
	srv.AddTool(&mcp.Tool{Name: "confirm", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Sure?", RequestedSchema: map[string]any{"type": "object"}})
			if err != nil {
				return nil, err
			}
			if res.Action == "decline" {
				declined <- struct{}{}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	m := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{
			{ID: "call_1", Name: "asker_confirm", Arguments: json.RawMessage(`{}`)},
			{ID: "call_2", Name: "asker_confirm", Arguments: json.RawMessage(`{}`)}}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			var results []string
			for _, m := range req.Messages {
				if m.Role == model.RoleTool {
					results = append(results, m.Content)
				}
			}
			slices.Sort(results)
			return modeltest.Turn{Text: strings.Join(results, " ")}
		}},
	)
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"asker": map[string]any{"enabled": true, "type": "http", "url": hs.URL}}, "skills": map[string]any{}})
	e := newEnv(t, envOptions{model: m, elicit: true, extensions: string(ext),
		gateway: func(o *gateway.Options) { o.MaxElicitationsPerRun = 1 }})
	tid := uuid.NewString()
	// When both calls are in flight on the session as the first asks,
	// which one asked is unknown and the card names no call; when the
	// other has not started yet, the card names the one that asked.
	rid, card := e.askUntilCard(tid, "*")
	if id := card["tool_call_id"]; id != "" && id != "call_1" && id != "call_2" {
		t.Errorf("card of call %v", id)
	}
	<-declined
	if got := e.answerCard(tid, rid, elicitAnswer(humanInputOf(card), "option", "accept", "accept")); got != "accept decline" {
		t.Errorf("the server got %q, want one accept and one decline", got)
	}
}

// TestElicitation_noHumanDeclines: a run whose context says no human is
// there (a webhook channel's disable_clarification, a scheduled run's
// non_interactive) never waits: the server gets "decline" at once and
// the run ends with no card.
func TestElicitation_noHumanDeclines(t *testing.T) {
	for _, key := range []string{"disable_clarification", "non_interactive"} {
		t.Run(key, func(t *testing.T) {
			e := elicitEnv(t, "confirm", nil)
			tid := uuid.NewString()
			body := runBody(tid, humanInput("Book it", nil))
			body["context"].(map[string]any)[key] = true
			resp := e.startStream(tid, "", body)
			rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tid)
			tr, err := readAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range tr.Values {
				for _, m := range messagesOf(v) {
					if m["name"] == "ask_clarification" {
						t.Fatalf("a card was shown: %v", m)
					}
				}
			}
			e.waitRun(tid, rid, "success")
			if got := lastMessage(tr.Last())["content"]; got != `The tool said: {"action":"decline"}` {
				t.Errorf("final answer = %q", got)
			}
		})
	}
}
