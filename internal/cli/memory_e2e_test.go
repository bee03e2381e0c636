package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// memoryAnswer is the scripted extraction answer that remembers the
// preference stated in the first thread.
const memoryAnswer = `{"newFacts": [{"content": "User prefers tabs over spaces", "category": "preference", "confidence": 0.95,` +
	` "scope": "user", "durability": "durable", "authority": "descriptive"}]}`

// TestServe_memoryRemembersAndForgets is issue 24's acceptance with the
// scripted model against the real serve command: a turn stating a
// preference is extracted into the memory document, the next thread's
// first model request carries the fact in its system prompt, and a fact
// deleted through /api/memory is gone from the request after.
func TestServe_memoryRemembersAndForgets(t *testing.T) {
	// The first thread's answer and its extraction, then the extraction
	// of every other turn (nothing new) and the answers.
	srv := modeltest.NewScriptServer(t, modeltest.Script{Turns: []modeltest.Turn{{Text: "Noted."}, {Text: memoryAnswer}}, Rules: []modeltest.Rule{
		{Contains: "newFacts", Reply: modeltest.Turn{Text: `{"newFacts": []}`}},
		{LastRole: model.RoleUser, Reply: modeltest.Turn{Text: "Noted."}},
	}})
	cfg, home := e2eConfig(t, srv.URL)
	appendFile(t, cfg, "memory:\n  enabled: true\n  backend_config:\n    debounce_seconds: 1\n")
	url, stop := startServe(t, nil, "--config", cfg, "--home", home)
	defer stop()

	memoryRun(t, url, "t1", "I always want tabs, never spaces.")
	id := waitForFact(t, url, "User prefers tabs over spaces")

	memoryRun(t, url, "t2", "second thread")
	if sys := systemPromptOf(t, srv, "second thread"); !strings.Contains(sys, "User prefers tabs over spaces") {
		t.Errorf("the next thread's system prompt lacks the fact:\n%s", sys)
	}

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, url+"/api/memory/facts/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE fact: %s", resp.Status)
	}
	memoryRun(t, url, "t3", "third thread")
	if sys := systemPromptOf(t, srv, "third thread"); strings.Contains(sys, "tabs over spaces") {
		t.Errorf("the deleted fact is still in the system prompt:\n%s", sys)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exit = %d", code)
	}
}

// memoryRun streams one run of a user message on a thread to its end.
func memoryRun(t *testing.T, url, thread, text string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": text}}},
		"stream_mode": []string{"values"}})
	resp, err := http.Post(url+"/api/langgraph/threads/"+thread+"/runs/stream", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), "Noted.") {
		t.Fatalf("run on %s: %s %s", thread, resp.Status, data)
	}
}

// waitForFact polls GET /api/memory until the fact is there (the
// extraction runs after the debounce) and returns its id.
func waitForFact(t *testing.T, url, content string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var doc struct {
			Facts []struct{ ID, Content string }
		}
		resp, err := http.Get(url + "/api/memory")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range doc.Facts {
			if f.Content == content {
				return f.ID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the memory document never held %q", content)
	return ""
}

// systemPromptOf is the system message of the first model request whose
// last message is the user's text.
func systemPromptOf(t *testing.T, srv *modeltest.Server, text string) string {
	t.Helper()
	for _, b := range srv.Bodies() {
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(b, &req) != nil || len(req.Messages) < 2 {
			continue
		}
		if !strings.Contains(string(req.Messages[len(req.Messages)-1].Content), text) || req.Messages[0].Role != "system" {
			continue
		}
		var sys string
		if json.Unmarshal(req.Messages[0].Content, &sys) != nil {
			sys = string(req.Messages[0].Content)
		}
		return sys
	}
	t.Fatalf("no model request for %q", text)
	return ""
}
