package gateway_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model/modeltest"
)

// run streams one prompt on tid and returns its transcript.
func (e *env) run(tid, text string) *transcript {
	e.t.Helper()
	resp := e.startStream(tid, "", runBody(tid, humanInput(text, nil)))
	defer resp.Body.Close()
	tr, err := readAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return tr
}

// TestSummarizationUpdatesFrame: a summarization is an updates frame under
// DeerFlow's node name with a remove-all marker, the kept tail and the
// summary, which the frontend keeps the older turns visible from; the
// summary call streams no message.
func TestSummarizationUpdatesFrame(t *testing.T) {
	chat := modeltest.New(modeltest.Turn{Text: "one"}, modeltest.Turn{Text: "SUMMARY"}, modeltest.Turn{Text: "two"})
	e := newEnv(t, envOptions{model: chat, config: "summarization:\n  enabled: true\n" +
		"  trigger: {type: messages, value: 3}\n  keep: {type: messages, value: 1}\n"})
	tid := uuid.NewString()
	if tr := e.run(tid, "first question"); len(summaryUpdates(tr)) != 0 {
		t.Fatalf("summarised below the trigger")
	}
	tr := e.run(tid, "second question")
	ups := summaryUpdates(tr)
	if len(ups) != 1 {
		t.Fatalf("summarization updates = %d, want 1 (updates: %v)", len(ups), tr.Updates)
	}
	u := ups[0]
	if u["summary_text"] != "SUMMARY" {
		t.Errorf("summary_text = %v", u["summary_text"])
	}
	msgs, _ := u["messages"].([]any)
	var got []string
	for _, m := range msgs {
		d := m.(map[string]any)
		text, _ := d["content"].(string)
		got = append(got, d["type"].(string)+":"+d["id"].(string)[:min(len(d["id"].(string)), 14)]+":"+text)
	}
	if len(got) != 2 || got[0] != "remove:__remove_all__:" || !strings.HasPrefix(got[1], "human:") ||
		!strings.HasSuffix(got[1], "second question") {
		t.Errorf("messages = %q, want the remove-all marker and the new request", got)
	}
	for id, m := range tr.Messages {
		if c, _ := m["content"].(string); strings.Contains(c, "SUMMARY") {
			t.Errorf("the summary call streamed message %s", id)
		}
	}
	last := tr.Last()
	if last["summary_text"] != "SUMMARY" || len(last["messages"].([]any)) != 2 {
		t.Errorf("last values: summary %v, %d messages", last["summary_text"], len(last["messages"].([]any)))
	}
}

func summaryUpdates(tr *transcript) []map[string]any {
	var out []map[string]any
	for _, u := range tr.Updates {
		if n, ok := u[agent.SummarizationNode].(map[string]any); ok {
			out = append(out, n)
		}
	}
	return out
}

func TestCompactRoute(t *testing.T) {
	chat := modeltest.New(modeltest.Turn{Text: "one"}, modeltest.Turn{Text: "two"}, modeltest.Turn{Text: "SUMMARY"})
	e := newEnv(t, envOptions{model: chat, config: "summarization:\n  enabled: true\n  keep: {type: messages, value: 1}\n"})
	tid := uuid.NewString()
	e.run(tid, "first question")
	e.run(tid, "second question")

	var res map[string]any
	e.json("POST", "/api/threads/"+tid+"/compact", "", map[string]any{"force": true, "model_name": "test-model"}, 200, &res)
	var st map[string]any
	e.json("GET", "/api/langgraph/threads/"+tid+"/state", "", nil, 200, &st)
	cpID := st["checkpoint_id"]
	want := map[string]any{"thread_id": tid, "compacted": true, "reason": nil, "removed_message_count": 2.0,
		"preserved_message_count": 2.0, "summary_updated": true, "checkpoint_id": cpID, "total_tokens": res["total_tokens"]}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("compact (-want +got):\n%s", diff)
	}
	values := st["values"].(map[string]any)
	if values["summary_text"] != "SUMMARY" || len(values["messages"].([]any)) != 2 {
		t.Errorf("state after compact: %v", values)
	}

	// The current request is kept, so there is nothing more to compact.
	e.json("POST", "/api/threads/"+tid+"/compact", "", map[string]any{"force": true}, 200, &res)
	if res["compacted"] != false || res["reason"] != "not_enough_messages" || res["checkpoint_id"] != nil {
		t.Errorf("second compact = %v", res)
	}
	if code := e.status("POST", "/api/threads/"+uuid.NewString()+"/compact", "", map[string]any{"force": true}); code != 404 {
		t.Errorf("compact of an unknown thread: %d", code)
	}
}

func TestCompactDisabled(t *testing.T) {
	e := newEnv(t, envOptions{})
	tid := uuid.NewString()
	e.run(tid, "hi")
	var res map[string]any
	e.json("POST", "/api/threads/"+tid+"/compact", "", map[string]any{"force": true}, 409, &res)
	if res["detail"] != "Context compaction is disabled." {
		t.Errorf("detail = %v", res["detail"])
	}
}
