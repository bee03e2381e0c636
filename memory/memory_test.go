package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/memory"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/tool"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// section is the memory section of the tests: on, middleware mode.
func section(t testing.TB, extra string) config.Memory {
	t.Helper()
	src := "models:\n  - {name: m, use: x:Y, model: m}\nmemory:\n  enabled: true\n" + extra
	c, err := config.Parse("config.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Memory
}

func newManager(t *testing.T, cfg config.Memory, m model.ChatModel) (*memory.Manager, string) {
	t.Helper()
	home := t.TempDir()
	mgr, err := memory.New(memory.Options{Config: cfg, Home: home, Model: m, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Close(context.Background()) })
	return mgr, home
}

// answer is an extraction answer with the given new facts.
func answer(facts ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"newFacts": facts,
		"user": map[string]any{"personalContext": map[string]any{"summary": "Writes in English.", "shouldUpdate": true, "scope": "user", "authority": "descriptive"}}})
	return "```json\n" + string(b) + "\n```"
}

func fact(content, category string, conf float64) map[string]any {
	return map[string]any{"content": content, "category": category, "confidence": conf,
		"scope": "user", "durability": "durable", "authority": "descriptive"}
}

func turn(user, assistant string) []model.Message {
	return []model.Message{{Role: model.RoleUser, Content: user},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "x"}}},
		{Role: model.RoleTool, Content: "tool output"}, {Role: model.RoleAssistant, Content: assistant}}
}

func TestExtraction_preferenceIsRememberedAndInjected(t *testing.T) {
	m := modeltest.New(modeltest.Turn{Text: answer(fact("User prefers tabs over spaces", "preference", 0.95))})
	mgr, home := newManager(t, section(t, ""), m)
	mgr.Enqueue("alice", "t1", turn("I always want tabs, never spaces.", "Noted."))
	if err := mgr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	req := m.LastRequest()
	if req == nil || !strings.Contains(req.Messages[0].Content, "User: I always want tabs, never spaces.") ||
		strings.Contains(req.Messages[0].Content, "tool output") {
		t.Fatalf("extraction request: %+v", req)
	}
	d, err := mgr.Get(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Facts) != 1 || d.Facts[0].Content != "User prefers tabs over spaces" || d.Facts[0].Source != "t1" ||
		d.User.PersonalContext.Summary != "Writes in English." {
		t.Fatalf("document: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(home, "users", "alice", "memory.json")); err != nil {
		t.Errorf("document file: %v", err)
	}
	p, err := mgr.Prompt(t.Context(), "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	want := "<memory>\nUser Context:\n- Personal: Writes in English.\n\nFacts:\n- [preference | 0.95] User prefers tabs over spaces\n</memory>"
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("prompt (-want +got):\n%s", diff)
	}
	if p, _ := mgr.Prompt(t.Context(), "bob", ""); p != "" {
		t.Errorf("another user's prompt: %q", p)
	}
}

func TestExtraction_gates(t *testing.T) {
	for _, tc := range []struct {
		name string
		fact map[string]any
		kept bool
	}{
		{"stated", fact("Uses Go 1.26", "knowledge", 0.9), true},
		{"under the threshold", fact("Maybe likes tea", "preference", 0.6), false},
		{"thread scope", map[string]any{"content": "Wants this PR merged", "confidence": 0.9, "scope": "thread"}, false},
		{"temporary", map[string]any{"content": "Is tired today", "confidence": 0.9, "durability": "temporary"}, false},
		{"transactional", map[string]any{"content": "May force-push", "confidence": 0.99, "authority": "transactional"}, false},
		{"unlabelled", map[string]any{"content": "Lives in Lyon", "confidence": 0.9}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := modeltest.New(modeltest.Turn{Text: answer(tc.fact)})
			mgr, _ := newManager(t, section(t, ""), m)
			mgr.Enqueue("u", "t", turn("hello", "hi"))
			if err := mgr.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			d, _ := mgr.Get(t.Context(), "u")
			if got := len(d.Facts) == 1; got != tc.kept {
				t.Errorf("facts %+v, want kept=%v", d.Facts, tc.kept)
			}
		})
	}
}

func TestExtraction_failureKeepsMemory(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn modeltest.Turn
	}{
		{"provider error", modeltest.Turn{Status: 500, Error: "boom"}},
		{"not JSON", modeltest.Turn{Text: "I cannot help with that."}},
		{"wrong shape", modeltest.Turn{Text: `{"newFacts": "lots"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mgr, _ := newManager(t, section(t, ""), modeltest.New(tc.turn))
			before, _, err := mgr.CreateFact(t.Context(), "u", memory.FactInput{Content: "Likes Go", Category: "preference", Confidence: 0.9})
			if err != nil {
				t.Fatal(err)
			}
			mgr.Enqueue("u", "t", turn("hello", "hi"))
			if err := mgr.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			after, _ := mgr.Get(t.Context(), "u")
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("memory changed by a failed extraction (-before +after):\n%s", diff)
			}
		})
	}
}

func TestClose_drainsPending(t *testing.T) {
	m := modeltest.New(modeltest.Turn{Text: answer(fact("Prefers dark mode", "preference", 0.9))})
	home := t.TempDir()
	mgr, err := memory.New(memory.Options{Config: section(t, ""), Home: home, Model: m})
	if err != nil {
		t.Fatal(err)
	}
	mgr.Enqueue("u", "t", turn("dark mode please", "ok"))
	if mgr.Pending() != 1 {
		t.Fatalf("pending %d", mgr.Pending())
	}
	if err := mgr.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	mgr.Enqueue("u", "t2", turn("more", "ok")) // after Close: dropped
	d, _ := mgr.Get(t.Context(), "u")
	if len(d.Facts) != 1 || m.Calls() != 1 {
		t.Errorf("after Close: facts %+v, model calls %d", d.Facts, m.Calls())
	}
}

func TestQueue_newerTurnReplacesPendingAndDepthBounds(t *testing.T) {
	m := modeltest.New(modeltest.Turn{Text: answer()})
	mgr, _ := newManager(t, section(t, "  backend_config: {queue_max_depth: 2}\n"), m)
	mgr.Enqueue("u", "t1", turn("one", "ok"))
	mgr.Enqueue("u", "t1", turn("one again", "ok"))
	mgr.Enqueue("u", "t2", turn("two", "ok"))
	mgr.Enqueue("u", "t3", turn("three", "ok")) // over the depth: dropped
	if got := mgr.Pending(); got != 2 {
		t.Fatalf("pending %d, want 2", got)
	}
	if err := mgr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := m.Calls(); got != 2 {
		t.Errorf("model calls %d, want 2", got)
	}
	if !strings.Contains(m.Requests()[0].Messages[0].Content, "one again") {
		t.Errorf("the pending turn was not replaced by the newer one")
	}
}

func TestFileStorage_crashDuringWriteLeavesOldOrNew(t *testing.T) {
	root := t.TempDir()
	fs := &memory.FileStorage{Root: root}
	old := memory.NewDocument()
	old.Facts = []memory.Fact{{ID: "fact_1", Content: "old", Category: "context", Confidence: 0.9}}
	if err := fs.Save(t.Context(), "u", old); err != nil {
		t.Fatal(err)
	}
	crash := errors.New("crash")
	var tmpSeen string
	memory.SetBeforeRename(fs, func(tmp string) error {
		tmpSeen = tmp
		data, err := os.ReadFile(tmp)
		if err != nil || !strings.Contains(string(data), "new") {
			t.Errorf("temporary file %q: %v", data, err)
		}
		return crash
	})
	nd := memory.NewDocument()
	nd.Facts = []memory.Fact{{ID: "fact_2", Content: "new", Category: "context", Confidence: 0.9}}
	if err := fs.Save(t.Context(), "u", nd); !errors.Is(err, crash) {
		t.Fatalf("Save = %v", err)
	}
	got, err := fs.Load(t.Context(), "u")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(old, got); diff != "" {
		t.Errorf("after a crash before the rename (-old +got):\n%s", diff)
	}
	if _, err := os.Stat(tmpSeen); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}
	memory.SetBeforeRename(fs, nil)
	if err := fs.Save(t.Context(), "u", nd); err != nil {
		t.Fatal(err)
	}
	if got, _ := fs.Load(t.Context(), "u"); got.Facts[0].Content != "new" {
		t.Errorf("after the write: %+v", got)
	}
}

func TestFileStorage_badDocumentNamed(t *testing.T) {
	root := t.TempDir()
	fs := &memory.FileStorage{Root: root}
	p, _ := fs.Path("u")
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	_ = os.WriteFile(p, []byte("{not json"), 0o644)
	if _, err := fs.Load(t.Context(), "u"); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("Load = %v, want an error naming %s", err, p)
	}
	if _, err := fs.Path("../x"); err == nil {
		t.Error("a user id with a path escaped")
	}
}

func TestFacts_crudAndLimits(t *testing.T) {
	mgr, _ := newManager(t, section(t, "  backend_config: {max_facts: 10}\n"), nil)
	ctx := t.Context()
	_, id, err := mgr.CreateFact(ctx, "u", memory.FactInput{Content: " Likes Go ", Confidence: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := mgr.CreateFact(ctx, "u", memory.FactInput{Content: "likes go", Confidence: 0.8}); !errors.Is(err, memory.ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	for _, in := range []memory.FactInput{{Content: ""}, {Content: "x", Confidence: 1.5}, {Content: strings.Repeat("a", memory.MaxFactRunes+1)}} {
		if _, _, err := mgr.CreateFact(ctx, "u", in); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("CreateFact(%.20q) = %v, want ErrInvalid", in.Content, err)
		}
	}
	cat := "knowledge"
	d, err := mgr.UpdateFact(ctx, "u", id, memory.FactPatch{Category: &cat})
	if err != nil || d.Facts[0].Category != "knowledge" || d.Facts[0].Content != "Likes Go" || d.Facts[0].UpdatedAt == "" {
		t.Fatalf("UpdateFact: %+v %v", d, err)
	}
	if _, err := mgr.UpdateFact(ctx, "u", "fact_nope", memory.FactPatch{}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	for i := range 9 {
		if _, _, err := mgr.CreateFact(ctx, "u", memory.FactInput{Content: "fact " + string(rune('a'+i)), Confidence: 0.9}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := mgr.CreateFact(ctx, "u", memory.FactInput{Content: "weak", Confidence: 0.1}); !errors.Is(err, memory.ErrCapacity) {
		t.Errorf("a fact evicted at once: %v", err)
	}
	d, _ = mgr.Get(ctx, "u")
	if len(d.Facts) != 10 {
		t.Errorf("%d facts, want max_facts 10", len(d.Facts))
	}
	if d, err = mgr.DeleteFact(ctx, "u", id); err != nil || len(d.Facts) != 9 {
		t.Errorf("DeleteFact: %d facts, %v", len(d.Facts), err)
	}
	if d, err = mgr.Clear(ctx, "u"); err != nil || len(d.Facts) != 0 || d.Version != "1.0" {
		t.Errorf("Clear: %+v %v", d, err)
	}
}

func TestPrompt_budgetGuaranteesCorrections(t *testing.T) {
	mgr, _ := newManager(t, section(t, "  backend_config: {max_injection_tokens: 100}\n"), nil)
	ctx := t.Context()
	long := strings.Repeat("word ", 60) // about 75 tokens
	for _, in := range []memory.FactInput{
		{Content: "A long fact " + long, Confidence: 0.99},
		{Content: "Use uv, not pip", Category: "correction", Confidence: 0.5},
		{Content: "Second long fact " + long, Confidence: 0.98},
		{Content: "Likes <b>bold</b>", Confidence: 0.4},
	} {
		if _, _, err := mgr.CreateFact(ctx, "u", in); err != nil {
			t.Fatal(err)
		}
	}
	p, err := mgr.Prompt(ctx, "u", "")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(p, "\n")
	want := []string{"<memory>", "Facts:", "- [correction | 0.50] Use uv, not pip", "- [context | 0.99] A long fact " + strings.TrimSpace(long),
		"- [context | 0.40] Likes &lt;b&gt;bold&lt;/b&gt;", "</memory>"}
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("prompt lines (-want +got):\n%s", diff)
	}
}

func TestSearch_fullText(t *testing.T) {
	mgr, _ := newManager(t, section(t, ""), nil)
	ctx := t.Context()
	for _, c := range []string{"Prefers Python for data scripts", "Works at Acme on the billing service", "Uses Neovim with tabs"} {
		if _, _, err := mgr.CreateFact(ctx, "u", memory.FactInput{Content: c, Confidence: 0.9}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ query, want string }{
		{"which editor? neovim", "Uses Neovim with tabs"},
		{"python scripts", "Prefers Python for data scripts"},
		{"BILLING", "Works at Acme on the billing service"},
		{`"unbalanced OR (`, ""},
	} {
		got, err := mgr.Search(ctx, "u", tc.query, "", 5)
		if err != nil {
			t.Fatal(err)
		}
		first := ""
		if len(got) > 0 {
			first = got[0].Content
		}
		if first != tc.want {
			t.Errorf("Search(%q) = %+v, want first %q", tc.query, got, tc.want)
		}
	}
	if got, _ := mgr.Search(ctx, "other", "python", "", 5); len(got) != 0 {
		t.Errorf("another user's search found %+v", got)
	}
}

func TestStaleness_reviewRemovesOnlyCandidates(t *testing.T) {
	now := t0
	home := t.TempDir()
	cfg := section(t, "  backend_config: {staleness_min_candidates: 2, staleness_max_removals_per_cycle: 1}\n")
	m := modeltest.New(modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
		if !strings.Contains(req.Messages[0].Content, "Facts due for review:\n- fact_old1") {
			t.Errorf("no staleness review in the prompt:\n%s", req.Messages[0].Content)
		}
		return modeltest.Turn{Text: `{"staleFactsToRemove": [{"id": "fact_old1"}, {"id": "fact_old2"}, {"id": "fact_new"}]}`}
	}})
	mgr, err := memory.New(memory.Options{Config: cfg, Home: home, Model: m, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close(context.Background())
	old := stampOf(now.AddDate(0, 0, -200))
	doc := &memory.Document{Facts: []memory.Fact{
		{ID: "fact_old1", Content: "Old one", Confidence: 0.9, CreatedAt: old},
		{ID: "fact_old2", Content: "Old two", Confidence: 0.9, CreatedAt: old},
		{ID: "fact_oldc", Content: "Old correction", Category: "correction", Confidence: 0.9, CreatedAt: old},
		{ID: "fact_new", Content: "New", Confidence: 0.9, CreatedAt: stampOf(now)},
	}}
	if _, err := mgr.Import(t.Context(), "u", doc); err != nil {
		t.Fatal(err)
	}
	mgr.Enqueue("u", "t", turn("hi", "hello"))
	if err := mgr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	d, _ := mgr.Get(t.Context(), "u")
	var ids []string
	for _, f := range d.Facts {
		ids = append(ids, f.ID)
	}
	if diff := cmp.Diff([]string{"fact_old2", "fact_oldc", "fact_new"}, ids); diff != "" {
		t.Errorf("facts after the review (-want +got):\n%s", diff)
	}
}

func stampOf(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func TestTools_modeTool(t *testing.T) {
	mgr, _ := newManager(t, section(t, "  mode: tool\n"), nil)
	tools := map[string]*tool.Tool{}
	for _, tl := range mgr.Tools() {
		tools[tl.Name] = tl
	}
	if len(tools) != 4 {
		t.Fatalf("tools %v", tools)
	}
	call := func(name, args string) string {
		t.Helper()
		res, err := tools[name].Handler(t.Context(), &tool.Call{Name: name, UserID: "u"}, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		return res.TextContent()
	}
	out := call("memory_add", `{"content": "Prefers short answers", "category": "preference", "confidence": 0.9}`)
	var added struct{ FactID, Status string }
	_ = json.Unmarshal([]byte(strings.ReplaceAll(out, "fact_id", "FactID")), &added)
	if added.Status != "added" || added.FactID == "" {
		t.Fatalf("memory_add: %s", out)
	}
	if out := call("memory_add", `{"content": "prefers short answers"}`); !strings.HasPrefix(out, "Error: duplicate fact") {
		t.Errorf("duplicate add: %s", out)
	}
	if out := call("memory_search", `{"query": "short"}`); !strings.Contains(out, `"count":1`) || !strings.Contains(out, added.FactID) {
		t.Errorf("memory_search: %s", out)
	}
	if out := call("memory_update", `{"fact_id": "`+added.FactID+`", "content": "Prefers very short answers"}`); !strings.Contains(out, `"updated"`) {
		t.Errorf("memory_update: %s", out)
	}
	if out := call("memory_delete", `{"fact_id": "fact_nope"}`); out != "Error: Fact not found: fact_nope" {
		t.Errorf("memory_delete unknown: %s", out)
	}
	if out := call("memory_delete", `{"fact_id": "`+added.FactID+`"}`); !strings.Contains(out, `"deleted"`) {
		t.Errorf("memory_delete: %s", out)
	}
	mw, _ := newManager(t, section(t, ""), nil)
	if mw.Tools() != nil {
		t.Error("middleware mode binds memory tools")
	}
}
