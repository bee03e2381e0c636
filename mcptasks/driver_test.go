package mcptasks

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/tool"
)

func TestParseSubmit(t *testing.T) {
	for _, tc := range []struct{ name, answer, wantID, wantErr string }{
		{"running", `{"task_id": "r1", "status": "running", "extra": 1}`, "r1", ""},
		{"no id", `{"status": "running"}`, "", "task_id is missing"},
		{"blank id", `{"task_id": "  ", "status": "running"}`, "", "task_id is missing"},
		{"long id", `{"task_id": "` + strings.Repeat("x", 256) + `", "status": "running"}`, strings.Repeat("x", 256), "longer than 255"},
		{"other status", `{"task_id": "r1", "status": "completed"}`, "", `status must be "running"`},
		{"not an object", `[1]`, "", "invalid structuredContent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := parseSubmit(json.RawMessage(tc.answer), "submit")
			if tc.wantErr == "" {
				if err != nil || id != tc.wantID {
					t.Errorf("parseSubmit = %q, %v", id, err)
				}
				return
			}
			var pe *ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want a ProtocolError containing %q", err, tc.wantErr)
			}
			if id != tc.wantID {
				t.Errorf("id with the error = %q, want %q (a started task to cancel)", id, tc.wantID)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		cancel       bool
		want         snapshot
		wantErr      string
	}{
		{name: "running", answer: `{"task_id": "r1", "status": "running", "poll_after_seconds": 2.5}`,
			want: snapshot{status: store.MCPTaskWorking, pollAfter: 2.5}},
		{name: "completed with a result", answer: `{"task_id": "r1", "status": "completed", "result": {"a": 1}}`,
			want: snapshot{status: store.MCPTaskCompleted, result: json.RawMessage(`{"a": 1}`)}},
		{name: "failed", answer: `{"task_id": "r1", "status": "failed", "error": "boom", "result": null}`,
			want: snapshot{status: store.MCPTaskFailed, errText: "boom"}},
		{name: "not found fails the task", answer: `{"task_id": "other", "status": "running", "error_code": "task_not_found"}`,
			want: snapshot{status: store.MCPTaskFailed, errText: "the remote MCP task was not found"}},
		{name: "input required", answer: `{"task_id": "r1", "status": "input_required", "input_required": {"q": "?"}}`,
			want: snapshot{status: store.MCPTaskInputRequired, inputRequired: json.RawMessage(`{"q": "?"}`)}},
		{name: "a day at most", answer: `{"task_id": "r1", "status": "running", "poll_after_seconds": 1e9}`,
			want: snapshot{status: store.MCPTaskWorking, pollAfter: maxPollAfterSecond}},
		{name: "another task", answer: `{"task_id": "r2", "status": "running"}`, wantErr: `not the tracked "r1"`},
		{name: "unknown status", answer: `{"task_id": "r1", "status": "paused"}`, wantErr: `unexpected status "paused"`},
		{name: "input required without a question", answer: `{"task_id": "r1", "status": "input_required"}`, wantErr: "without input_required"},
		{name: "non-positive poll_after", answer: `{"task_id": "r1", "status": "running", "poll_after_seconds": 0}`, wantErr: "positive"},
		{name: "a cancel must end the task", answer: `{"task_id": "r1", "status": "running"}`, cancel: true, wantErr: "unexpected status"},
		{name: "a question too large", answer: `{"task_id": "r1", "status": "input_required", "input_required": "` + strings.Repeat("q", maxInputRequired) + `"}`,
			wantErr: "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatus(json.RawMessage(tc.answer), "status", "r1", tc.cancel)
			if tc.wantErr != "" {
				var pe *ProtocolError
				if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want a ProtocolError containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(snapshot{})); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStructured(t *testing.T) {
	withSC := &tool.Result{Artifact: map[string]any{"structured_content": map[string]any{"task_id": "r1"}}}
	if b, err := structured(withSC, "s"); err != nil || string(b) != `{"task_id":"r1"}` {
		t.Errorf("structured = %s, %v", b, err)
	}
	var pe *ProtocolError
	if _, err := structured(tool.Text(`{"task_id": "r1"}`), "s"); !errors.As(err, &pe) {
		t.Errorf("text only: %v, want a ProtocolError (text is not parsed)", err)
	}
	_, err := structured(tool.Errorf("%s", strings.Repeat("e", 600)), "s")
	if err == nil || errors.As(err, &pe) || len(err.Error()) > 600 {
		t.Errorf("error result: %v, want a plain, bounded error (retried)", err)
	}
}

// update bounds what a poll stores and schedules the next poll; backoff
// doubles up to its cap.
func TestUpdateAndBackoff(t *testing.T) {
	r, err := New(Options{Store: struct{ store.MCPTasks }{}, MCP: struct{ MCP }{},
		Config: config.MCPTasks{MaxResultBytes: 1024, ResultPreviewMaxChars: 10, MaxPollBackoffSeconds: 60}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		in   snapshot
		want store.MCPTaskUpdate
	}{
		{"small result kept compact", snapshot{status: store.MCPTaskCompleted, result: json.RawMessage(`{ "a" : 1 }`)},
			store.MCPTaskUpdate{Status: store.MCPTaskCompleted, Result: json.RawMessage(`{"a":1}`)}},
		{"large result becomes a preview", snapshot{status: store.MCPTaskCompleted, result: json.RawMessage(`"` + strings.Repeat("ü", 1100) + `"`)},
			store.MCPTaskUpdate{Status: store.MCPTaskCompleted, ResultPreview: strings.Repeat("ü", 10), ResultTruncated: true}},
		{"working: poll interval", snapshot{status: store.MCPTaskWorking},
			store.MCPTaskUpdate{Status: store.MCPTaskWorking, NextPollAt: now.Add(5 * time.Second)}},
		{"working: the server's wait", snapshot{status: store.MCPTaskWorking, pollAfter: 30},
			store.MCPTaskUpdate{Status: store.MCPTaskWorking, NextPollAt: now.Add(30 * time.Second)}},
		{"input required: at least its interval", snapshot{status: store.MCPTaskInputRequired, pollAfter: 1, inputRequired: json.RawMessage(`{}`)},
			store.MCPTaskUpdate{Status: store.MCPTaskInputRequired, InputRequired: json.RawMessage(`{}`), NextPollAt: now.Add(60 * time.Second)}},
		{"error bounded", snapshot{status: store.MCPTaskFailed, errText: strings.Repeat("e", 5000)},
			store.MCPTaskUpdate{Status: store.MCPTaskFailed, Error: strings.Repeat("e", maxErrorChars)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, r.update(tc.in, now)); diff != "" {
				t.Errorf("update (-want +got):\n%s", diff)
			}
		})
	}
	var waits []time.Duration
	for n := range 6 {
		waits = append(waits, r.backoff(n))
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	if diff := cmp.Diff(want, waits); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
}
