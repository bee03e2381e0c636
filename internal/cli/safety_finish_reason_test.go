package cli

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// `antler run` against a provider that cuts a write_file call with
// finish_reason content_filter: on by default the file is never written,
// the answer says why and the run ends safety_capped; with
// safety_finish_reason.enabled false the call runs.
func TestSafetyFinishReason_runNeverWritesACutFile(t *testing.T) {
	for _, tc := range []struct {
		name, section string
		written       bool
		reason        string
	}{
		{"on by default", "", false, "safety_capped"},
		{"DeerFlow's example section", "safety_finish_reason:\n  enabled: true\n", false, "safety_capped"},
		{"enabled: false", "safety_finish_reason:\n  enabled: false\n", true, "completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.NewServer(t,
				modeltest.Turn{Text: "Here is the report:", FinishReason: "content_filter", ToolCalls: []model.ToolCall{toolCall("w1", "write_file",
					`{"description":"save","path":"/mnt/user-data/outputs/report.md","content":"# Weekly Politics\n- Meeting time: 2026-05-12"}`)}},
				modeltest.Turn{Text: "saved"})
			cfg, home := e2eConfig(t, srv.URL)
			if tc.section != "" {
				appendFile(t, cfg, tc.section)
			}
			code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "write me a report")
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, errOut, out)
			}
			_, err := os.Stat(filepath.Join(home, "users", "default", "threads", "t1", "user-data", "outputs", "report.md"))
			if written := err == nil; written != tc.written {
				t.Errorf("report.md written = %v, want %v (stat: %v)", written, tc.written, err)
			}
			evs := parseEvents(t, out)
			if last := evs[len(evs)-1]; last.Type != "done" || last.Reason != tc.reason {
				t.Errorf("last event %+v, want done %s", last, tc.reason)
			}
			var custom, explained bool
			for _, ev := range evs {
				if ev.Type == "safety_termination" && ev.Data["reason_value"] == "content_filter" && ev.Data["thread_id"] == "t1" {
					custom = true
				}
				if ev.Type == "message" && ev.Message != nil && strings.Contains(ev.Message.Content, "Any tool calls produced in this turn were suppressed") {
					explained = true
				}
			}
			if custom == tc.written || explained == tc.written {
				t.Errorf("safety_termination event %v, explanation %v, want %v\n%s", custom, explained, !tc.written, out)
			}
		})
	}
}

// In text mode, what the guard adds after the stream (its explanation)
// is printed after the streamed text, once.
func TestRenderer_printsTextAddedAfterTheStream(t *testing.T) {
	var out, errw bytes.Buffer
	r := &renderer{w: &out, errw: &errw, status: &statusLine{w: &errw}}
	r.event(agent.Event{Type: agent.EventMessageDelta, Delta: "Here is the report:"})
	r.event(agent.Event{Type: agent.EventMessage, Message: &model.Message{Content: "Here is the report:\n\nThe model provider stopped"}})
	r.event(agent.Event{Type: agent.EventToolStart, Name: "ls"})
	r.event(agent.Event{Type: agent.EventMessageDelta, Delta: "next"})
	r.event(agent.Event{Type: agent.EventMessage, Message: &model.Message{Content: "next"}})
	r.finish()
	if got, want := out.String(), "Here is the report:\n\nThe model provider stopped\nnext\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

// Through `antler serve`, the cut call streams DeerFlow's
// safety_termination custom frame and the stored answer's
// additional_kwargs carry the record; the file is never written.
func TestSafetyFinishReason_serveStreamsTheTermination(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.Turn{FinishReason: "content_filter", ToolCalls: []model.ToolCall{toolCall("w1", "write_file",
			`{"description":"save","path":"/mnt/user-data/outputs/a.txt","content":"half"}`)}})
	cfg, home := e2eConfig(t, srv.URL)
	url, stop := startServe(t, nil, "--config", cfg, "--home", home)
	defer stop()
	body := `{"input":{"messages":[{"type":"human","content":"save"}]},"stream_mode":["values","custom"]}`
	resp, err := http.Post(url+"/api/langgraph/threads/t1/runs/stream", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	frame := `event: custom` + "\n" + `data: {"detector":"openai_compatible_content_filter","reason_field":"finish_reason",` +
		`"reason_value":"content_filter","suppressed_tool_call_count":1,"suppressed_tool_call_names":["write_file"],` +
		`"thread_id":"t1","type":"safety_termination"}`
	if !strings.Contains(string(data), frame) {
		t.Errorf("stream lacks the safety_termination frame:\n%s", data)
	}
	if !strings.Contains(string(data), `"safety_termination":{`) || !strings.Contains(string(data), `"stop_reason":"safety_capped"`) {
		t.Errorf("stored answer lacks the record:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(home, "users", "default", "threads", "t1", "user-data", "outputs", "a.txt")); !os.IsNotExist(err) {
		t.Errorf("write_file ran: stat err %v", err)
	}
}
