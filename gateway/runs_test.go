package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// slowTurn streams for several seconds unless cancelled.
var slowTurn = modeltest.Turn{Text: strings.Repeat("slow ", 400), ChunkDelay: 10 * time.Millisecond}

// readUntil reads frames until one named event, returning it.
func readUntil(t *testing.T, rd *sseReader, event string) sseEvent {
	t.Helper()
	for {
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("stream ended before a %s frame: %v", event, err)
		}
		if ev.Event == event {
			return ev
		}
	}
}

// waitRun polls a run until its status is want.
func (e *env) waitRun(tid, rid, want string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var rn map[string]any
		e.json("GET", "/api/threads/"+tid+"/runs/"+rid, "", nil, 200, &rn)
		if rn["status"] == want {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("run %s status = %v, want %s", rid, rn["status"], want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCancelMidRun is the stop button: cancel while the answer streams.
// The stream ends with an end frame and no error toast, the run is
// interrupted, and the thread takes the next run.
func TestCancelMidRun(t *testing.T) {
	m := modeltest.FromScript(modeltest.Script{ChunkSize: 5, Turns: []modeltest.Turn{slowTurn, {Text: "next run"}}})
	e := newEnv(t, envOptions{model: m})
	tid := uuid.NewString()
	resp := e.startStream(tid, "", runBody(tid, humanInput("go", nil)))
	defer resp.Body.Close()
	rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tid)
	rd := newSSEReader(resp.Body)
	readUntil(t, rd, "messages")

	if got := e.status("POST", "/api/langgraph/threads/"+tid+"/runs/"+rid+"/cancel?wait=0&action=interrupt", "", nil); got != 202 {
		t.Fatalf("cancel = %d, want 202", got)
	}
	tr, err := readAll(io.MultiReader(resp.Body))
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Ended || len(tr.Errors) > 0 {
		t.Fatalf("after cancel: ended %v, errors %v", tr.Ended, tr.Errors)
	}
	e.waitRun(tid, rid, "interrupted")
	// A second cancel is the "not cancellable" 409 the frontend swallows.
	resp2 := e.do("POST", "/api/threads/"+tid+"/runs/"+rid+"/cancel", "", nil)
	body, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if resp2.StatusCode != 409 || !strings.Contains(string(body), "is not cancellable") {
		t.Errorf("second cancel = %d %s", resp2.StatusCode, body)
	}

	resp = e.startStream(tid, "", runBody(tid, humanInput("again", nil)))
	tr, err = readAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	msgs := messagesOf(tr.Last())
	if got := msgs[len(msgs)-1]["content"]; got != "next run" {
		t.Errorf("next run answered %q", got)
	}
}

// TestSecondRunConflicts: one run per thread; a concurrent one is 409.
func TestSecondRunConflicts(t *testing.T) {
	m := modeltest.FromScript(modeltest.Script{ChunkSize: 5, Turns: []modeltest.Turn{slowTurn, {Text: "after"}}})
	e := newEnv(t, envOptions{model: m})
	tid := uuid.NewString()
	resp := e.startStream(tid, "", runBody(tid, humanInput("first", nil)))
	defer resp.Body.Close()
	rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tid)
	readUntil(t, newSSEReader(resp.Body), "messages")

	r2 := e.do("POST", "/api/threads/"+tid+"/runs/stream", "", runBody(tid, humanInput("second", nil)))
	body, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.StatusCode != 409 {
		t.Fatalf("concurrent run = %d %s, want 409", r2.StatusCode, body)
	}
	if got := e.status("POST", "/api/threads/"+tid+"/runs/"+rid+"/cancel?wait=1", "", nil); got != 204 {
		t.Fatalf("cancel?wait=1 = %d, want 204", got)
	}
	resp = e.startStream(tid, "", runBody(tid, humanInput("third", nil)))
	tr, _ := readAll(resp.Body)
	resp.Body.Close()
	if !tr.Ended || len(tr.Errors) > 0 {
		t.Fatalf("run after cancel: %v", tr.Errors)
	}
}

// TestDisconnect: without on_disconnect "continue" a client that goes
// away cancels the run; with it the run finishes and can be rejoined
// from the start (Last-Event-ID -1) or after a frame.
func TestDisconnect(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		m := modeltest.FromScript(modeltest.Script{ChunkSize: 5, Turns: []modeltest.Turn{slowTurn}})
		e := newEnv(t, envOptions{model: m})
		tid := uuid.NewString()
		body := runBody(tid, humanInput("go", nil))
		delete(body, "on_disconnect")
		resp := e.startStream(tid, "", body)
		rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tid)
		readUntil(t, newSSEReader(resp.Body), "messages")
		resp.Body.Close()
		e.waitRun(tid, rid, "interrupted")
	})
	t.Run("continue", func(t *testing.T) {
		m := modeltest.FromScript(modeltest.Script{ChunkSize: 50, Turns: []modeltest.Turn{
			{Text: strings.Repeat("continued ", 40), ChunkDelay: 5 * time.Millisecond}}})
		e := newEnv(t, envOptions{model: m})
		tid := uuid.NewString()
		resp := e.startStream(tid, "", runBody(tid, humanInput("go", nil)))
		rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tid)
		readUntil(t, newSSEReader(resp.Body), "messages")
		resp.Body.Close()

		req, _ := http.NewRequestWithContext(t.Context(), "GET", e.url+"/api/langgraph/threads/"+tid+"/runs/"+rid+"/stream?cancel_on_disconnect=0", nil)
		req.Header.Set("Last-Event-ID", "-1")
		jr, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if jr.StatusCode == 409 { // the run already ended: nothing to rejoin
			jr.Body.Close()
		} else {
			tr, err := readAll(jr.Body)
			jr.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if tr.Events[0].Event != "metadata" || tr.Events[0].ID != "1" || !tr.Ended {
				t.Errorf("rejoined stream starts with %s id %s, ended %v", tr.Events[0].Event, tr.Events[0].ID, tr.Ended)
			}
		}
		e.waitRun(tid, rid, "success")
	})
	t.Run("join after an event id", func(t *testing.T) {
		m := modeltest.FromScript(modeltest.Script{ChunkSize: 5, Turns: []modeltest.Turn{slowTurn}})
		e := newEnv(t, envOptions{model: m})
		tid := uuid.NewString()
		resp := e.startStream(tid, "", runBody(tid, humanInput("go", nil)))
		defer resp.Body.Close()
		rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tid)
		readUntil(t, newSSEReader(resp.Body), "messages")
		req, _ := http.NewRequestWithContext(t.Context(), "GET", e.url+"/api/threads/"+tid+"/runs/"+rid+"/stream", nil)
		req.Header.Set("Last-Event-ID", "2")
		jr, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer jr.Body.Close()
		ev, err := newSSEReader(jr.Body).Next()
		if err != nil || ev.ID != "3" {
			t.Errorf("first rejoined frame id = %q (%v), want 3", ev.ID, err)
		}
		e.status("POST", "/api/threads/"+tid+"/runs/"+rid+"/cancel?wait=1", "", nil)
	})
}

// TestClarificationRoundTrip: ask_clarification ends the run successfully
// with the tool-message shape of docs/api.md; the answer is an
// ordinary next run (hidden human message with human_input_response) that
// resumes the conversation.
func TestClarificationRoundTrip(t *testing.T) {
	args, _ := json.Marshal(map[string]any{"question": "Which format?", "clarification_type": "approach_choice",
		"options": []string{"Markdown", "PDF"}})
	m := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{ID: "call_ask", Name: "ask_clarification", Arguments: args}}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			var sawQuestion bool
			for _, m := range req.Messages {
				if m.Role == model.RoleTool && m.Name == "ask_clarification" && strings.Contains(m.Content, "Which format?") {
					sawQuestion = true
				}
			}
			last := modeltest.LastMessage(req)
			if !sawQuestion || last.Role != model.RoleUser {
				return modeltest.Turn{Text: "lost the question"}
			}
			return modeltest.Turn{Text: "Going with: " + last.Content}
		}},
	)
	e := newEnv(t, envOptions{model: m})
	tid := uuid.NewString()

	resp := e.startStream(tid, "", runBody(tid, humanInput("Make me a report", nil)))
	rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tid)
	tr, err := readAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	msgs := messagesOf(tr.Last())
	q := msgs[len(msgs)-1]
	if q["type"] != "tool" || q["name"] != "ask_clarification" || q["tool_call_id"] != "call_ask" || q["id"] != "clarification:call_ask" {
		t.Fatalf("last message = %v", q)
	}
	if !strings.Contains(q["content"].(string), "Which format?") {
		t.Errorf("question text = %q", q["content"])
	}
	hi := q["artifact"].(map[string]any)["human_input"].(map[string]any)
	if hi["kind"] != "human_input_request" || hi["source"] != "ask_clarification" || hi["input_mode"] == "free_text" {
		t.Errorf("human_input = %v", hi)
	}
	e.waitRun(tid, rid, "success")

	answer := humanInput("For your clarification, my answer is: PDF", map[string]any{"hide_from_ui": true,
		"human_input_response": map[string]any{"version": 1, "kind": "human_input_response", "source": "ask_clarification",
			"request_id": hi["request_id"], "response_kind": "option", "option_id": "option-2", "value": "PDF"}})
	resp = e.startStream(tid, "", runBody(tid, answer))
	tr, err = readAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	msgs = messagesOf(tr.Last())
	// The model sees the answer framed by the input sanitisation.
	if got := msgs[len(msgs)-1]["content"]; got != "Going with: --- BEGIN USER INPUT ---\nFor your clarification, my answer is: PDF\n--- END USER INPUT ---" {
		t.Fatalf("resumed answer = %q", got)
	}
	hidden := msgs[len(msgs)-2]
	if kw := hidden["additional_kwargs"].(map[string]any); kw["hide_from_ui"] != true || kw["human_input_response"] == nil {
		t.Errorf("answer message kwargs = %v", kw)
	}
}
