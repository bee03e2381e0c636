package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// The guard's tests re-express DeerFlow's test_tool_progress_middleware.py.

// newGuard is DeerFlow's _make_mw: the defaults with min_words 5.
func newGuard(mod func(*config.ToolProgress)) *ToolProgressGuard {
	c := config.Default().ToolProgress
	c.Enabled, c.MinWordCountForSimilarity = true, 5
	c.ExemptTools = slices.Clone(c.ExemptTools)
	if mod != nil {
		mod(&c)
	}
	return NewToolProgressGuard(c, nil)
}

func withThresholds(stagnation, escalation int) func(*config.ToolProgress) {
	return func(c *config.ToolProgress) { c.StagnationThreshold, c.WarnEscalationCount = stagnation, escalation }
}

// metaResult is a result whose classification is stamped as given.
func metaResult(text, status, errType string, recoverable bool, next string) *tool.Result {
	var et any
	if errType != "" {
		et = errType
	}
	return &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: text}}, IsError: status == "error",
		Meta: map[string]any{ToolMetaKey: map[string]any{"status": status, "error_type": et, "recoverable_by_model": recoverable,
			"recommended_next_action": next, "source": "content_analysis"}}}
}

func okResult(text string) *tool.Result { return metaResult(text, "success", "", true, "continue") }

// noResults is a recoverable error (no_results, rewrite_query).
func noResults() *tool.Result {
	return metaResult("Error: no results found", "error", "no_results", true, "rewrite_query")
}

// rateLimited is an unrecoverable error that is no stop (rate_limited).
func rateLimited() *tool.Result {
	return metaResult("Error: rate limited", "error", "rate_limited", false, "summarize")
}

func authError() *tool.Result {
	return metaResult("Error: invalid api key", "error", "auth", false, "stop")
}

// guardCall runs one call of name in thread/run through the guard's tool
// middleware; the handler returns res and counts its calls.
func guardCall(t *testing.T, g *ToolProgressGuard, thread, run, name string, res *tool.Result, calls *int) *tool.Result {
	t.Helper()
	h := g.ToolMiddleware()(func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
		if calls != nil {
			*calls++
		}
		return res, nil
	})
	out, err := h(t.Context(), &tool.Call{ID: "tc-" + name, Name: name, ThreadID: thread, RunID: run}, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func repeatCall(t *testing.T, g *ToolProgressGuard, n int, res *tool.Result) {
	t.Helper()
	for range n {
		guardCall(t, g, "t1", "r1", "web_search", res, nil)
	}
}

// phaseOf is the state of a tool in a thread, and false when untracked.
func phaseOf(g *ToolProgressGuard, thread, name string) (toolPhase, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	el := g.threads[thread]
	if el == nil {
		return toolPhase{}, false
	}
	st, ok := el.Value.(*progressThread).tools[name]
	return st, ok
}

func mustPhase(t *testing.T, g *ToolProgressGuard, thread, name string) toolPhase {
	t.Helper()
	st, ok := phaseOf(g, thread, name)
	if !ok {
		t.Fatalf("%s/%s is not tracked", thread, name)
	}
	return st
}

func TestToolProgressGuard_wordSetKeepsWordsOfThreeOrMore(t *testing.T) {
	ws := wordSet("go quick brown fox")
	if diff := cmp.Diff(map[string]bool{"quick": true, "brown": true, "fox": true}, ws); diff != "" {
		t.Errorf("word set (-want +got):\n%s", diff)
	}
}

func TestToolProgressGuard_nearDuplicate(t *testing.T) {
	set := func(s string) map[string]bool { return wordSet(s) }
	base := set("alpha bravo charlie delta echo foxtrot golf hotel")
	for _, c := range []struct {
		name      string
		cur, prev map[string]bool
		want      bool
	}{
		{"identical sets are duplicates", set("quick brown fox jumps over lazy dog"), set("quick brown fox jumps over lazy dog"), true},
		{"7 of 9 shared is under 0.8", set("alpha bravo charlie delta echo foxtrot golf india"), base, false},
		{"8 of 9 shared is over 0.8", set("alpha bravo charlie delta echo foxtrot golf hotel india"), base, true},
		{"disjoint sets are not", set("xray yankee zulu alpha bravo"), set("apple banana cherry delta echo"), false},
		{"sets under min_words are never compared", set("apple"), set("apple"), false},
	} {
		if got := nearDuplicate(c.cur, []map[string]bool{c.prev}, 0.8, 5); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestToolProgressGuard_normalCallStaysActive(t *testing.T) {
	g := newGuard(nil)
	res := okResult(strings.Repeat("A", 300))
	if out := guardCall(t, g, "t1", "r1", "web_search", res, nil); out != res {
		t.Error("the result was changed")
	}
	if st := mustPhase(t, g, "t1", "web_search"); st.phase != phaseActive || st.problems != 0 {
		t.Errorf("state %+v, want active with no problems", st)
	}
}

func TestToolProgressGuard_repeatedNoResultsReachWarned(t *testing.T) {
	g := newGuard(withThresholds(2, 2))
	repeatCall(t, g, 2, noResults())
	if st := mustPhase(t, g, "t1", "web_search"); st.phase != phaseWarned || st.problems != 2 {
		t.Errorf("state %+v, want warned after 2 problems", st)
	}
	if hints := g.drain("t1", "r1"); len(hints) != 1 || !strings.Contains(hints[0], "PROGRESS HINT") {
		t.Errorf("hints %q, want one progress hint", hints)
	}
}

func TestToolProgressGuard_unrecoverableWarnedEscalatesToBlocked(t *testing.T) {
	g := newGuard(withThresholds(2, 2))
	repeatCall(t, g, 4, rateLimited())
	if st := mustPhase(t, g, "t1", "web_search"); st.phase != phaseBlocked || st.blockReason == "" {
		t.Errorf("state %+v, want blocked with a reason", st)
	}
}

func TestToolProgressGuard_blockedToolIsInterceptedWithoutCallingIt(t *testing.T) {
	g := newGuard(withThresholds(2, 1))
	calls := 0
	for range 3 {
		guardCall(t, g, "t1", "r1", "web_search", rateLimited(), &calls)
	}
	if st := mustPhase(t, g, "t1", "web_search"); st.phase != phaseBlocked {
		t.Fatalf("state %+v, want blocked", st)
	}
	out := guardCall(t, g, "t1", "r1", "web_search", rateLimited(), &calls)
	if calls != 3 {
		t.Errorf("the blocked tool ran (%d calls)", calls)
	}
	want := "[TOOL_BLOCKED] Repeated rate-limiting — summarize current findings and proceed."
	if !out.IsError || out.TextContent() != want {
		t.Errorf("result %q (error %v), want %q", out.TextContent(), out.IsError, want)
	}
	if m, _ := out.Meta[ToolMetaKey].(map[string]any); m["error_type"] != "blocked_by_progress_guard" || m["source"] != "progress_middleware" {
		t.Errorf("meta %v", out.Meta)
	}
}

func TestToolProgressGuard_recoverableErrorsStayWarned(t *testing.T) {
	g := newGuard(withThresholds(2, 1))
	repeatCall(t, g, 10, noResults())
	if st := mustPhase(t, g, "t1", "web_search"); st.phase != phaseWarned || st.problems != 10 {
		t.Errorf("state %+v, want warned with 10 problems", st)
	}
}

func TestToolProgressGuard_recoverableErrorsRequeueHintsPastEscalation(t *testing.T) {
	g := newGuard(withThresholds(2, 1))
	repeatCall(t, g, 4, noResults())
	hints := g.drain("t1", "r1")
	if len(hints) < 2 || len(hints) > maxPendingHintsPerRun {
		t.Errorf("%d hints, want 2 to %d", len(hints), maxPendingHintsPerRun)
	}
}

func TestToolProgressGuard_authErrorBlocksAtOnce(t *testing.T) {
	g := newGuard(withThresholds(5, 2))
	repeatCall(t, g, 1, authError())
	st := mustPhase(t, g, "t1", "web_search")
	if st.phase != phaseBlocked || st.problems != 1 || st.blockReason != "Authentication failure — this tool cannot be used." {
		t.Errorf("state %+v, want blocked at once with 1 problem", st)
	}
}

func TestToolProgressGuard_goodResultResetsToActive(t *testing.T) {
	g := newGuard(withThresholds(3, 5))
	repeatCall(t, g, 3, noResults())
	if st := mustPhase(t, g, "t1", "web_search"); st.phase != phaseWarned {
		t.Fatalf("state %+v, want warned", st)
	}
	repeatCall(t, g, 1, okResult(strings.Repeat("A", 300)))
	if st := mustPhase(t, g, "t1", "web_search"); st.phase != phaseActive || st.problems != 0 {
		t.Errorf("state %+v, want active again", st)
	}
}

func TestToolProgressGuard_toolsHaveIndependentStates(t *testing.T) {
	g := newGuard(withThresholds(2, 1))
	repeatCall(t, g, 3, rateLimited())
	guardCall(t, g, "t1", "r1", "read_file", noResults(), nil)
	if st := mustPhase(t, g, "t1", "web_search"); st.phase != phaseBlocked {
		t.Errorf("web_search %+v, want blocked", st)
	}
	if st := mustPhase(t, g, "t1", "read_file"); st.phase != phaseActive {
		t.Errorf("read_file %+v, want active", st)
	}
}

const tenWords = "apple banana cherry delta echo foxtrot golf hotel india juliet"

func TestToolProgressGuard_nearDuplicateSuccessIsAProblem(t *testing.T) {
	g := newGuard(withThresholds(2, 5))
	repeatCall(t, g, 2, okResult(tenWords))
	if st := mustPhase(t, g, "t1", "web_search"); st.problems < 1 {
		t.Errorf("state %+v, want the repeat counted", st)
	}
}

func TestToolProgressGuard_differentContentIsNotAProblem(t *testing.T) {
	g := newGuard(withThresholds(3, 5))
	repeatCall(t, g, 1, okResult(tenWords))
	repeatCall(t, g, 1, okResult("xray yankee zulu alpha bravo charlie sierra tango uniform victor"))
	if st := mustPhase(t, g, "t1", "web_search"); st.phase != phaseActive || st.problems != 0 {
		t.Errorf("state %+v, want active", st)
	}
}

func TestToolProgressGuard_shortContentSkipsSimilarityAtDefaultMinWords(t *testing.T) {
	g := newGuard(func(c *config.ToolProgress) { c.MinWordCountForSimilarity = 10 })
	repeatCall(t, g, 5, okResult("apple banana cherry delta echo foxtrot golf"))
	if st := mustPhase(t, g, "t1", "web_search"); st.phase != phaseActive || st.problems != 0 {
		t.Errorf("state %+v, want active: 7 words are under min_word_count_for_similarity 10", st)
	}
}

func TestToolProgressGuard_exemptToolsAreNotTracked(t *testing.T) {
	g := newGuard(withThresholds(1, 1))
	for range 5 {
		guardCall(t, g, "t1", "r1", "ask_clarification", noResults(), nil)
	}
	if _, ok := phaseOf(g, "t1", "ask_clarification"); ok {
		t.Error("an exempt tool is tracked")
	}
}

func TestToolProgressGuard_newRunDropsStaleHintsAndKeepsItsOwn(t *testing.T) {
	g := newGuard(withThresholds(2, 5))
	repeatCall(t, g, 2, noResults()) // a hint for r1
	g.mu.Lock()
	g.pending[[2]string{"t1", "r2"}] = []string{"current hint"}
	g.mu.Unlock()
	g.enterRun("t1", "r2")
	if got := g.drain("t1", "r1"); len(got) != 0 {
		t.Errorf("stale hints of r1 kept: %q", got)
	}
	if got := g.drain("t1", "r2"); !slices.Equal(got, []string{"current hint"}) {
		t.Errorf("hints of the current run %q, want kept", got)
	}
}

func TestToolProgressGuard_newRunResetsEveryToolState(t *testing.T) {
	g := newGuard(withThresholds(3, 5))
	guardCall(t, g, "t1", "r1", "web_search", authError(), nil)  // blocked
	guardCall(t, g, "t1", "r1", "fetch", noResults(), nil)       // active, 1 problem
	guardCall(t, g, "t1", "r1", "read", okResult(tenWords), nil) // active, 1 word set
	for range 3 {
		guardCall(t, g, "t1", "r1", "grep", noResults(), nil) // warned
	}
	calls := 0
	guardCall(t, g, "t1", "r2", "web_search", okResult("fine"), &calls)
	if calls != 1 {
		t.Error("a tool blocked in the previous run is still blocked")
	}
	for _, name := range []string{"fetch", "read", "grep"} {
		if st := mustPhase(t, g, "t1", name); st.phase != phaseActive || st.problems != 0 || len(st.recent) != 0 || st.blockReason != "" {
			t.Errorf("%s after the new run started: %+v, want active and clean", name, st)
		}
	}
}

func TestToolProgressGuard_blockCheckCreatesNoEntries(t *testing.T) {
	g := newGuard(func(c *config.ToolProgress) { c.MaxTrackedThreads, c.StagnationThreshold = 2, 2 })
	guardCall(t, g, "thread-a", "r", "web_search", noResults(), nil)
	guardCall(t, g, "thread-a", "r", "web_search", noResults(), nil)
	guardCall(t, g, "thread-b", "r", "web_search", okResult("A"), nil)
	if g.blockReason("thread-c", "read_file") != "" {
		t.Fatal("an untracked thread has a block reason")
	}
	if _, ok := g.threads["thread-c"]; ok {
		t.Error("the block check created an entry")
	}
	guardCall(t, g, "thread-c", "r", "read_file", okResult("A"), nil)
	if _, ok := phaseOf(g, "thread-c", "read_file"); !ok || g.lru.Len() > 2 {
		t.Errorf("thread-c tracked %v, %d threads (max 2)", ok, g.lru.Len())
	}
}

func TestToolProgressGuard_evictsLeastRecentlyUsedThreadWithItsHints(t *testing.T) {
	g := newGuard(func(c *config.ToolProgress) { c.MaxTrackedThreads, c.StagnationThreshold = 2, 2 })
	guardCall(t, g, "thread-0", "run-0", "web_search", noResults(), nil)
	guardCall(t, g, "thread-0", "run-0", "web_search", noResults(), nil) // a hint queued
	guardCall(t, g, "thread-1", "run-1", "web_search", okResult("A"), nil)
	guardCall(t, g, "thread-2", "run-2", "web_search", okResult("A"), nil)
	for th, want := range map[string]bool{"thread-0": false, "thread-1": true, "thread-2": true} {
		if _, ok := phaseOf(g, th, "web_search"); ok != want {
			t.Errorf("%s tracked: %v, want %v", th, ok, want)
		}
	}
	if _, ok := g.pending[[2]string{"thread-0", "run-0"}]; ok {
		t.Error("the evicted thread's hints are kept")
	}
}

// guardModelCall sends msgs through the guard's model middleware and
// returns what the model saw.
func guardModelCall(t *testing.T, g *ToolProgressGuard, thread, run string) []model.Message {
	t.Helper()
	var seen []model.Message
	h := g.ModelMiddleware()(func(_ context.Context, c *tool.ModelCall) (*model.Response, error) {
		seen = c.Request.Messages
		return &model.Response{}, nil
	})
	if _, err := h(t.Context(), &tool.ModelCall{Request: &model.Request{Messages: []model.Message{model.UserText("go")}}, ThreadID: thread, RunID: run}); err != nil {
		t.Fatal(err)
	}
	return seen
}

func TestToolProgressGuard_hintReachesTheNextModelRequestOnce(t *testing.T) {
	g := newGuard(withThresholds(2, 5))
	repeatCall(t, g, 3, noResults()) // two identical hints queued
	seen := guardModelCall(t, g, "t1", "r1")
	want := "[PROGRESS HINT] Your search returned no results. Try rephrasing your search query with different keywords or approach."
	if len(seen) != 2 || seen[1].Role != model.RoleUser || seen[1].Name != ProgressHintName || seen[1].Content != want {
		t.Fatalf("model saw %+v, want the hint once after the user message", seen)
	}
	if seen = guardModelCall(t, g, "t1", "r1"); len(seen) != 1 {
		t.Error("the hint was injected twice")
	}
}

func TestToolProgressGuard_hintsAreSpecific(t *testing.T) {
	g := newGuard(withThresholds(2, 5))
	partial := metaResult("Here are some partial results from the search.", "partial_success", "", true, "rewrite_query")
	repeatCall(t, g, 2, partial)
	hints := g.drain("t1", "r1")
	if len(hints) != 1 || !strings.Contains(strings.ToLower(hints[0]), "incomplete results") {
		t.Errorf("partial-success hints %q", hints)
	}
	g = newGuard(withThresholds(2, 5))
	repeatCall(t, g, 3, okResult(tenWords))
	hints = g.drain("t1", "r1")
	want := "[PROGRESS HINT] The tool is returning duplicate results. Try rephrasing your query or using a different search term."
	if len(hints) != 1 || hints[0] != want {
		t.Errorf("near-duplicate hints %q, want %q", hints, want)
	}
}

func TestToolProgressGuard_noHintWhenInjectAssessmentOff(t *testing.T) {
	g := newGuard(func(c *config.ToolProgress) { c.StagnationThreshold, c.InjectAssessment = 2, false })
	repeatCall(t, g, 2, noResults())
	if hints := g.drain("t1", "r1"); len(hints) != 0 {
		t.Errorf("hints %q with inject_assessment off", hints)
	}
}

func TestToolProgressGuard_blockedStateIsTerminalInTransition(t *testing.T) {
	g := newGuard(nil)
	blocked := toolPhase{phase: phaseBlocked, problems: 1, blockReason: "r"}
	for _, m := range []ToolMeta{ClassifyResult(authError()), ClassifyResult(rateLimited()), ClassifyResult(noResults())} {
		if got, hint := g.transition(blocked, m, ""); got.phase != phaseBlocked || got.problems != 1 || hint != "" {
			t.Errorf("%+v after %+v, want blocked unchanged", got, m)
		}
	}
}

func TestToolProgressGuard_goErrorsAndUnreadableMetaAreNotTracked(t *testing.T) {
	g := newGuard(nil)
	h := g.ToolMiddleware()(func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
		return nil, context.Canceled
	})
	if _, err := h(t.Context(), &tool.Call{Name: "web_search", ThreadID: "t1"}, nil); err != context.Canceled {
		t.Errorf("error %v, want it passed through", err)
	}
	bad := &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: "x"}}, Meta: map[string]any{ToolMetaKey: map[string]any{"unexpected_field": true}}}
	if out := guardCall(t, g, "t1", "r1", "web_search", bad, nil); out != bad {
		t.Error("the result was changed")
	}
	if _, ok := phaseOf(g, "t1", "web_search"); ok {
		t.Error("a call was tracked")
	}
}

func TestToolProgressGuard_unstampedResultsAreClassified(t *testing.T) {
	g := newGuard(withThresholds(1, 1))
	guardCall(t, g, "t1", "r1", "web_search", tool.Errorf("No results found for the query"), nil)
	if st := mustPhase(t, g, "t1", "web_search"); st.phase != phaseWarned {
		t.Errorf("state %+v, want warned from the result's own classification", st)
	}
}

func TestToolProgressGuard_exemptToolsFromConfig(t *testing.T) {
	if g := newGuard(func(c *config.ToolProgress) { c.ExemptTools = []string{} }); len(g.exempt) != 0 {
		t.Errorf("exempt %v, want none for an empty list", g.exempt)
	}
	want := map[string]bool{"ask_clarification": true, "write_todos": true, "present_files": true, "task": true}
	if diff := cmp.Diff(want, newGuard(nil).exempt); diff != "" {
		t.Errorf("default exempt tools (-want +got):\n%s", diff)
	}
}

// Antler: a subagent's calls are tracked apart from the lead's.
func TestToolProgressGuard_subagentsTrackedApart(t *testing.T) {
	g := newGuard(withThresholds(1, 1))
	h := g.ToolMiddleware()(func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) { return authError(), nil })
	sub := &tool.Call{Name: "web_search", ThreadID: "t1", RunID: "r1", Context: map[string]any{"is_subagent": true, "subagent_type": "general-purpose"}}
	if _, err := h(t.Context(), sub, nil); err != nil {
		t.Fatal(err)
	}
	if g.blockReason("t1", "web_search") != "" {
		t.Error("the subagent's failure blocked the lead's tool")
	}
	if g.blockReason(progressScope("t1", sub.Context), "web_search") == "" {
		t.Error("the subagent's tool is not blocked")
	}
}

// The guard and loop detection keep their own state and both add their
// hints to the same model request, each once.
func TestToolProgressGuard_coexistsWithLoopDetection(t *testing.T) {
	g := newGuard(withThresholds(2, 5))
	repeatCall(t, g, 2, noResults())
	ld := NewLoopDetector(config.Default().LoopDetection, nil)
	ld.queue("t1", "r1", LoopWarningText)
	var seen []model.Message
	h := tool.ChainModel(func(_ context.Context, c *tool.ModelCall) (*model.Response, error) {
		seen = c.Request.Messages
		return &model.Response{}, nil
	}, g.ModelMiddleware(), ld.Middleware())
	if _, err := h(t.Context(), &tool.ModelCall{Request: &model.Request{Messages: []model.Message{model.UserText("go")}}, ThreadID: "t1", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range seen[1:] {
		names = append(names, m.Name)
	}
	if diff := cmp.Diff([]string{ProgressHintName, LoopWarningName}, names); diff != "" {
		t.Errorf("added messages (-want +got):\n%s", diff)
	}
	if strings.Contains(seen[1].Content, "LOOP") || !strings.Contains(seen[2].Content, "LOOP DETECTED") {
		t.Errorf("hints mixed up: %q / %q", seen[1].Content, seen[2].Content)
	}
}

// Transitions are logged as DeerFlow logs them: WARNED and ACTIVE at
// info, BLOCKED at warn, an intercepted call at info, hint injection at
// debug.
func TestToolProgressGuard_logsTransitions(t *testing.T) {
	var buf bytes.Buffer
	c := config.Default().ToolProgress
	c.Enabled, c.StagnationThreshold, c.WarnEscalationCount = true, 2, 1
	g := NewToolProgressGuard(c, slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	repeatCall(t, g, 2, noResults())                       // -> WARNED
	repeatCall(t, g, 1, okResult("fine"))                  // -> ACTIVE
	guardCall(t, g, "t1", "r1", "login", authError(), nil) // -> BLOCKED
	guardCall(t, g, "t1", "r1", "login", authError(), nil) // intercepted
	repeatCall(t, g, 2, noResults())
	guardModelCall(t, g, "t1", "r1") // injecting
	for _, want := range []string{
		`level=INFO msg="tool_progress: -> WARNED" thread=t1 tool=web_search consecutive_problems=2`,
		`level=INFO msg="tool_progress: -> ACTIVE (reset after good result)" thread=t1 tool=web_search`,
		`level=WARN msg="tool_progress: -> BLOCKED" thread=t1 tool=login`,
		`level=INFO msg="tool_progress: call intercepted (blocked)" thread=t1 tool=login`,
		`level=DEBUG msg="tool_progress: injecting hints" count=1`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf.String())
		}
	}
}
