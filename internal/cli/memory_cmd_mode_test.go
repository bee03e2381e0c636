package cli

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/memory"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// TestMemoryModes_toolsAndPrompt: what each memory mode binds, injects
// and extracts through the real run and tools list commands, on a home
// whose memory document holds a summary and a fact. Middleware injects
// both and extracts the turn; tool binds the four memory tools and
// injects the summary only (the model searches the facts); noop and a
// disabled section bind, inject and extract nothing.
func TestMemoryModes_toolsAndPrompt(t *testing.T) {
	for _, c := range []struct {
		name, section        string
		tools, summary, fact bool
		extracts             bool
	}{
		{name: "middleware", section: "memory:\n  enabled: true\n  mode: middleware\n", summary: true, fact: true, extracts: true},
		{name: "tool", section: "memory:\n  enabled: true\n  mode: tool\n", tools: true, summary: true},
		{name: "noop", section: "memory:\n  enabled: true\n  manager_class: noop\n"},
		{name: "disabled", section: "memory:\n  enabled: false\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := modeltest.NewScriptServer(t, modeltest.Script{Rules: []modeltest.Rule{
				{Contains: "newFacts", Reply: modeltest.Turn{Text: `{"newFacts": []}`}},
				{LastRole: model.RoleUser, Reply: modeltest.Turn{Text: "Noted."}},
			}})
			cfg, home := e2eConfig(t, srv.URL)
			appendFile(t, cfg, c.section)
			seedMemory(t, home)

			code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "tools", "list", "--width", "200")
			if code != 0 {
				t.Fatalf("tools list: exit %d %s", code, errOut)
			}
			for _, name := range []string{"memory_search", "memory_add", "memory_update", "memory_delete"} {
				if got := strings.Contains(out, name+" "); got != c.tools {
					t.Errorf("tools list has %s: %v, want %v:\n%s", name, got, c.tools, out)
				}
			}

			if code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "hello in "+c.name); code != 0 {
				t.Fatalf("run: exit %d %s", code, errOut)
			}
			sys := systemPromptOf(t, srv, "hello in "+c.name)
			if got := strings.Contains(sys, "Builds Antler"); got != c.summary {
				t.Errorf("system prompt has the summary: %v, want %v:\n%s", got, c.summary, sys)
			}
			if got := strings.Contains(sys, "Prefers tabs over spaces"); got != c.fact {
				t.Errorf("system prompt has the fact: %v, want %v:\n%s", got, c.fact, sys)
			}
			if !c.summary && strings.Contains(sys, "<memory") {
				t.Errorf("system prompt has a memory section:\n%s", sys)
			}
			extracted := false
			for _, b := range srv.Bodies() {
				extracted = extracted || strings.Contains(string(b), "newFacts")
			}
			if extracted != c.extracts {
				t.Errorf("the turn was sent for extraction: %v, want %v", extracted, c.extracts)
			}
		})
	}
}

// seedMemory writes the default user's memory document under home.
func seedMemory(t *testing.T, home string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(home, "users"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := memory.NewDocument()
	d.User.WorkContext = memory.Section{Summary: "Builds Antler", UpdatedAt: "2026-01-02T03:04:05Z"}
	d.Facts = []memory.Fact{{ID: "fact_aaaa0001", Content: "Prefers tabs over spaces", Category: "preference", Confidence: 0.95,
		CreatedAt: "2026-01-02T03:04:05Z", Source: "manual"}}
	if err := (&memory.FileStorage{Root: home}).Save(context.Background(), "default", d); err != nil {
		t.Fatal(err)
	}
}

// TestServe_memoryRoutesWithMemoryOff: without a memory section the
// lead agent has no memory, but DeerFlow's Memory page still lists and
// edits the stored documents through /api/memory, as DeerFlow's routes
// do with memory disabled.
func TestServe_memoryRoutesWithMemoryOff(t *testing.T) {
	srv := modeltest.NewScriptServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Reply: modeltest.Turn{Text: "Noted."}}}})
	cfg, home := e2eConfig(t, srv.URL)
	seedMemory(t, home)
	url, stop := startServe(t, nil, "--config", cfg, "--home", home)
	defer stop()
	waitForFact(t, url, "Prefers tabs over spaces")
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, url+"/api/memory/facts/fact_aaaa0001", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE fact with memory off: %s", resp.Status)
	}
	memoryRun(t, url, "t1", "hello")
	if sys := systemPromptOf(t, srv, "hello"); strings.Contains(sys, "<memory") {
		t.Errorf("memory off, yet the prompt has a memory section:\n%s", sys)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exit = %d", code)
	}
}
