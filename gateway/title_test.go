package gateway_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model/modeltest"
)

// TestTitleAfterFirstRun: the first exchange titles the thread (the
// default config has no title model, so the title is the user's message,
// DeerFlow's fallback). The frontend renames the thread live from the
// updates frame that carries title, and reads values.title from the last
// values frame, history and the sidebar search.
func TestTitleAfterFirstRun(t *testing.T) {
	e := newEnv(t, envOptions{model: modeltest.New(modeltest.Turn{Text: "Hi!"}, modeltest.Turn{Text: "Again."})})
	tid := uuid.NewString()
	resp := e.startStream(tid, "", runBody(tid, humanInput("Plan a weekend in Lisbon", nil)))
	tr, err := readAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	const want = "Plan a weekend in Lisbon"
	var titled []any
	for _, u := range tr.Updates {
		if node, ok := u[agent.TitleNode].(map[string]any); ok {
			titled = append(titled, node["title"])
		}
	}
	if len(titled) != 1 || titled[0] != want {
		t.Errorf("title updates = %v, want one with %q", titled, want)
	}
	if got := tr.Values[len(tr.Values)-1]["title"]; got != want {
		t.Errorf("last values title = %v", got)
	}

	var hist []map[string]any
	e.json("POST", "/api/langgraph/threads/"+tid+"/history", "", map[string]any{"limit": 1}, 200, &hist)
	if len(hist) != 1 || hist[0]["values"].(map[string]any)["title"] != want {
		t.Errorf("history = %v", hist)
	}
	var found []map[string]any
	e.json("POST", "/api/langgraph/threads/search", "", map[string]any{"limit": 50, "offset": 0,
		"select": []string{"thread_id", "updated_at", "values", "metadata"}}, 200, &found)
	if len(found) != 1 || found[0]["values"].(map[string]any)["title"] != want {
		t.Errorf("search = %v", found)
	}

	// A rename sticks: the second run is no first exchange, and a title
	// set by the user is never replaced.
	e.json("POST", "/api/langgraph/threads/"+tid+"/state", "", map[string]any{"values": map[string]any{"title": "Lisbon"}}, 200, nil)
	resp = e.startStream(tid, "", runBody(tid, humanInput("And Porto?", nil)))
	tr, err = readAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range tr.Updates {
		if _, ok := u[agent.TitleNode]; ok {
			t.Errorf("second run sent a title update: %v", u)
		}
	}
	if got := tr.Values[len(tr.Values)-1]["title"]; got != "Lisbon" {
		t.Errorf("title after the second run = %v", got)
	}
}

// TestTitleWithUploads: the uploaded-files block the gateway puts before
// the user's text is not part of the title.
func TestTitleWithUploads(t *testing.T) {
	e := newEnv(t, envOptions{})
	tid := uuid.NewString()
	files := []any{map[string]any{"filename": "notes.txt", "size": 5, "path": "/mnt/user-data/uploads/notes.txt", "status": "uploaded"}}
	resp := e.startStream(tid, "", runBody(tid, humanInput("Summarise my notes", map[string]any{"files": files})))
	tr, err := readAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	final := tr.Values[len(tr.Values)-1]
	if human := messagesOf(final)[0]["content"]; !strings.Contains(fmt.Sprint(human), "<uploaded_files>") {
		t.Fatalf("the human message has no uploads block: %v", human)
	}
	if got := final["title"]; got != "Summarise my notes" {
		t.Errorf("title = %q", got)
	}
}
