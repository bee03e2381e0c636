package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// runConfig points the only model at a modeltest server and binds one
// command tool (echo) so the test depends on no other area.
func runConfig(url string) string {
	return `models:
  - name: test
    use: langchain_openai:ChatOpenAI
    model: scripted
    api_key: modeltest
    base_url: ` + url + `
tools:
  - name: echo
    group: text
    use: antler:command
    command: ["cat"]
`
}

type jsonEvent struct {
	Type    string         `json:"type"`
	Name    string         `json:"name"`
	Reason  string         `json:"reason"`
	IsError bool           `json:"is_error"`
	Error   string         `json:"error"`
	Message *model.Message `json:"message"`
	Data    map[string]any `json:"data"`
	Update  map[string]any `json:"update"`
}

func parseEvents(t *testing.T, out string) []jsonEvent {
	t.Helper()
	var evs []jsonEvent
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev jsonEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON event line: %q (%v)", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func eventTypes(evs []jsonEvent) string {
	var s []string
	for _, ev := range evs {
		s = append(s, ev.Type)
	}
	return strings.Join(s, " ")
}

func toolCall(id, name, args string) model.ToolCall {
	return model.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func TestRunJSONToolCallThenAnswer(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "echo", `{"x":1}`)}},
		modeltest.Turn{Text: "all done"})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", runConfig(srv.URL))
	home := filepath.Join(dir, "home")
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := parseEvents(t, out)
	got := eventTypes(evs)
	// The first answer titles the thread (a state event, before the
	// answer's tools run).
	if !strings.HasPrefix(got, "message state tool_start tool_end message_delta") || !strings.HasSuffix(got, "message done") {
		t.Fatalf("events: %s", got)
	}
	if ev := evs[1]; ev.Name != "TitleMiddleware.after_model" || ev.Update["title"] != "hello" {
		t.Errorf("title event = %+v", ev)
	}
	if evs[3].Message == nil || !strings.Contains(evs[3].Message.Content, `"x":1`) {
		t.Errorf("tool_end = %+v", evs[3])
	}
	if last := evs[len(evs)-1]; last.Reason != "completed" {
		t.Errorf("done = %+v", last)
	}

	// The thread survives the process: a second run sees the history.
	srv2 := modeltest.NewServer(t, modeltest.Turn{Text: "again"})
	writeFile(t, dir, "config.yaml", runConfig(srv2.URL))
	if code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "more"); code != 0 {
		t.Fatalf("second run exit %d: %s", code, errOut)
	}
	if n := len(srv2.LastRequest().Messages); n < 5 {
		t.Errorf("second run sent %d messages; the history was lost", n)
	}
}

func TestRunJSONClarificationResumes(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "ask_clarification", `{"question":"Which?","clarification_type":"approach_choice","options":["a","b"]}`)}},
		modeltest.Turn{Text: "b it is"})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", runConfig(srv.URL))
	home := filepath.Join(dir, "home")
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "run", "--json", "--thread", "t", "do it")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := parseEvents(t, out)
	if last := evs[len(evs)-1]; last.Reason != "clarification" {
		t.Fatalf("events %s, done %+v", eventTypes(evs), last)
	}
	code, out, errOut = runCLI(t, nil, "--config", cfg, "--home", home, "run", "--json", "--thread", "t", "b")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if evs := parseEvents(t, out); evs[len(evs)-1].Reason != "completed" {
		t.Fatalf("resumed run: %s", eventTypes(evs))
	}
}

func TestRunJSONUnknownToolAndModelError(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "echoecho", `{}`)}},
		modeltest.Turn{Status: 500, Error: "upstream exploded"})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", runConfig(srv.URL)+"llm_call:\n  retry_max_attempts: 1\n")
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", filepath.Join(dir, "home"), "run", "--json", "go")
	if code != 1 || !strings.Contains(errOut, "antler: model \"test\" (openai): HTTP 500") {
		t.Errorf("exit %d, want 1 naming the failure; stderr %s", code, errOut)
	}
	evs := parseEvents(t, out)
	var toolEnd *jsonEvent
	for i := range evs {
		if evs[i].Type == "tool_end" {
			toolEnd = &evs[i]
		}
	}
	if toolEnd == nil || !toolEnd.IsError || !strings.HasPrefix(toolEnd.Message.Content, "Error: echoecho is not a valid tool, try one of [echo, ") {
		t.Errorf("tool_end = %+v", toolEnd)
	}
	// The failed model call is answered with DeerFlow's error fallback
	// message, and the run ends as error.
	n := len(evs)
	if evs[n-2].Type != "message" || evs[n-2].Message == nil || evs[n-2].Message.Meta["deerflow_error_fallback"] != true ||
		evs[n-1].Reason != "error" {
		t.Errorf("tail of events: %s", eventTypes(evs))
	}
}

func TestChatAnswersClarificationByNumber(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "ask_clarification", `{"question":"Which colour?","clarification_type":"approach_choice","options":["red","blue"]}`)}},
		modeltest.Turn{Text: "painting"})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", runConfig(srv.URL))
	var out, errOut strings.Builder
	opts := Options{Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader("paint\n2\n"), Getenv: func(string) string { return "" }}
	if code := Main(t.Context(), []string{"--config", cfg, "--home", filepath.Join(dir, "home"), "chat"}, opts); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "🔀 Which colour?\n\n  1. red\n  2. blue") || !strings.Contains(out.String(), "painting") {
		t.Errorf("stdout:\n%s", out.String())
	}
	if last := modeltest.LastMessage(srv.LastRequest()); last.Content != "--- BEGIN USER INPUT ---\nblue\n--- END USER INPUT ---" { // framed by the input sanitisation
		t.Errorf("answer sent as %q, want the option's value", last.Content)
	}
	if !strings.Contains(errOut.String(), "→ ask_clarification") {
		t.Errorf("stderr:\n%s", errOut.String())
	}
}
