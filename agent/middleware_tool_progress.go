package agent

import (
	"cmp"
	"container/list"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// Tool progress guard texts and bounds (DeerFlow's).
const (
	// toolBlockedPrefix starts the result of a call the guard blocked.
	toolBlockedPrefix = "[TOOL_BLOCKED] "
	// ProgressHintName names the user message that carries the hints.
	ProgressHintName = "progress_hint"
	// maxPendingHintsPerRun bounds the hints queued for one run.
	maxPendingHintsPerRun = 3
	// maxWordSetChars bounds the text the near-duplicate check reads.
	maxWordSetChars = 8192
	// recentWordSets is how many successful results a tool's
	// near-duplicate check compares with.
	recentWordSets = 3
)

// The phases of a tool in a thread.
const (
	phaseActive  = "active"
	phaseWarned  = "warned"
	phaseBlocked = "blocked"
)

// toolPhase is the state of one tool in one thread.
type toolPhase struct {
	phase       string
	problems    int // consecutive problem calls
	blockReason string
	recent      []map[string]bool // word sets of the last successful results
}

// progressThread is the tracked state of one thread (or one subagent
// scope of it).
type progressThread struct {
	key   string
	run   string // the run it was last seen in
	tools map[string]toolPhase
}

// ToolProgressGuard is DeerFlow's ToolProgressMiddleware (the
// tool_progress section), a guard on the quality of tool results. Per
// thread and tool it counts consecutive problem calls: an error, a
// partial result, or a success whose words are near-duplicates
// (Jaccard similarity at or over jaccard_similarity_threshold) of one of
// the tool's last three successful results. At stagnation_threshold the
// tool is warned and a hint queued for the next model request; a warned
// tool whose failures the model cannot fix by retrying (rate limits,
// transient failures) is blocked after warn_escalation_count more; an
// unrecoverable stop (auth, config, internal errors) blocks at once. A
// blocked tool is not called again in the run: its calls get
// "[TOOL_BLOCKED] {reason}". A problem-free call makes the tool active
// again. Every tool of a thread starts the next run active and clean.
//
// The classification is the tool-error classification
// (deerflow_tool_meta, [ClassifyResult]) of the result; a handler's Go
// error is not tracked. Subagents are tracked apart from the lead, one
// scope per subagent type. One guard serves every run; it is safe for
// concurrent use and forgets the least recently used threads beyond
// max_tracked_threads.
type ToolProgressGuard struct {
	cfg    config.ToolProgress
	exempt map[string]bool
	logger *slog.Logger

	mu      sync.Mutex
	threads map[string]*list.Element // of *progressThread; guarded by mu
	lru     *list.List               // guarded by mu
	pending map[[2]string][]string   // (scope, run) -> hints; guarded by mu
}

// NewToolProgressGuard returns the guard of cfg (the section as loaded,
// with DeerFlow's defaults). A nil logger discards.
func NewToolProgressGuard(cfg config.ToolProgress, logger *slog.Logger) *ToolProgressGuard {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.MaxTrackedThreads = max(cfg.MaxTrackedThreads, 1)
	exempt := map[string]bool{}
	for _, n := range cfg.ExemptTools {
		exempt[n] = true
	}
	return &ToolProgressGuard{cfg: cfg, exempt: exempt, logger: logger,
		threads: map[string]*list.Element{}, lru: list.New(), pending: map[[2]string][]string{}}
}

// progressScope is the key a call is tracked under: its thread, or the
// thread and the subagent type for a subagent's calls.
func progressScope(threadID string, rc map[string]any) string {
	key := cmp.Or(threadID, "default")
	if sub, _ := rc["is_subagent"].(bool); sub {
		typ, _ := rc["subagent_type"].(string)
		key += "\x00subagent:" + typ
	}
	return key
}

// ToolMiddleware blocks calls of blocked tools and tracks every other
// result.
func (g *ToolProgressGuard) ToolMiddleware() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			if call == nil || call.Name == "" || g.exempt[call.Name] {
				return next(ctx, call, args)
			}
			scope, run := progressScope(call.ThreadID, call.Context), cmp.Or(call.RunID, "default")
			g.enterRun(scope, run)
			if reason := g.blockReason(scope, call.Name); reason != "" {
				g.logger.Info("tool_progress: call intercepted (blocked)", "thread", scope, "tool", call.Name, "reason", reason)
				return blockedResult(reason), nil
			}
			res, err := next(ctx, call, args)
			if err != nil || res == nil {
				return res, err
			}
			g.track(scope, run, call.Name, res)
			return res, nil
		}
	}
}

// ModelMiddleware adds the queued hints of the run, once each, as one
// user message at the end of the request (never to the thread state).
func (g *ToolProgressGuard) ModelMiddleware() tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if call == nil || call.Request == nil {
				return next(ctx, call)
			}
			scope, run := progressScope(call.ThreadID, call.Context), cmp.Or(call.RunID, "default")
			g.enterRun(scope, run)
			hints := g.drain(scope, run)
			if len(hints) == 0 {
				return next(ctx, call)
			}
			hints = dedupe(hints)
			g.logger.Debug("tool_progress: injecting hints", "count", len(hints), "thread", scope, "run", run)
			c := *call
			req := call.Request.Clone()
			req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Name: ProgressHintName,
				Content: strings.Join(hints, "\n\n")})
			c.Request = req
			return next(ctx, &c)
		}
	}
}

// blockedResult is DeerFlow's blocked tool message.
func blockedResult(reason string) *tool.Result {
	return &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: toolBlockedPrefix + reason}}, IsError: true,
		Meta: map[string]any{ToolMetaKey: map[string]any{"status": "error", "error_type": "blocked_by_progress_guard",
			"recoverable_by_model": true, "recommended_next_action": "summarize", "source": "progress_middleware"}}}
}

// enterRun is DeerFlow's before_agent: the first time a scope is seen in
// a new run, every tool of it is made active and clean, and hints queued
// for its other runs are dropped. An untracked scope stays untracked.
func (g *ToolProgressGuard) enterRun(scope, run string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	el := g.threads[scope]
	if el == nil {
		return
	}
	t := el.Value.(*progressThread)
	if t.run == run {
		return
	}
	t.run = run
	for name := range t.tools {
		t.tools[name] = toolPhase{phase: phaseActive}
	}
	for k := range g.pending {
		if k[0] == scope && k[1] != run {
			delete(g.pending, k)
		}
	}
}

// blockReason is the reason a tool is blocked in scope, or "". It never
// creates an entry nor refreshes the scope's recency.
func (g *ToolProgressGuard) blockReason(scope, name string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	el := g.threads[scope]
	if el == nil {
		return ""
	}
	if st, ok := el.Value.(*progressThread).tools[name]; ok && st.phase == phaseBlocked {
		return st.blockReason
	}
	return ""
}

// track updates the tool's state from a result and queues a hint when
// the new state calls for one.
func (g *ToolProgressGuard) track(scope, run, name string, res *tool.Result) {
	meta, ok := resultMeta(res)
	if !ok {
		g.logger.Warn("tool_progress: deerflow_tool_meta unreadable, call not tracked", "tool", name)
		return
	}
	content := res.TextContent()
	g.mu.Lock()
	t := g.scopeLocked(scope, run)
	old := t.tools[name]
	if old.phase == "" {
		old.phase = phaseActive
	}
	next, hint := g.transition(old, meta, content)
	t.tools[name] = next
	if hint != "" && g.cfg.InjectAssessment {
		if q := g.pending[[2]string{scope, run}]; len(q) < maxPendingHintsPerRun {
			g.pending[[2]string{scope, run}] = append(q, hint)
		}
	}
	g.mu.Unlock()
	g.logTransition(scope, name, old, next)
}

func (g *ToolProgressGuard) logTransition(scope, name string, old, next toolPhase) {
	switch {
	case next.phase == old.phase:
	case next.phase == phaseBlocked:
		g.logger.Warn("tool_progress: -> BLOCKED", "thread", scope, "tool", name, "reason", next.blockReason)
	case next.phase == phaseWarned:
		g.logger.Info("tool_progress: -> WARNED", "thread", scope, "tool", name, "consecutive_problems", next.problems)
	case next.phase == phaseActive:
		g.logger.Info("tool_progress: -> ACTIVE (reset after good result)", "thread", scope, "tool", name)
	}
}

// scopeLocked returns the scope's state, creating it (and evicting the
// least recently used beyond max_tracked_threads, with their hints) when
// it is new, and marks it most recently used.
func (g *ToolProgressGuard) scopeLocked(scope, run string) *progressThread {
	if el := g.threads[scope]; el != nil {
		g.lru.MoveToFront(el)
		return el.Value.(*progressThread)
	}
	t := &progressThread{key: scope, run: run, tools: map[string]toolPhase{}}
	g.threads[scope] = g.lru.PushFront(t)
	for g.lru.Len() > g.cfg.MaxTrackedThreads {
		old := g.lru.Remove(g.lru.Back()).(*progressThread)
		delete(g.threads, old.key)
		for k := range g.pending {
			if k[0] == old.key {
				delete(g.pending, k)
			}
		}
	}
	return t
}

// drain takes the hints queued for the run.
func (g *ToolProgressGuard) drain(scope, run string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := [2]string{scope, run}
	hints := g.pending[k]
	delete(g.pending, k)
	return hints
}

// transition is DeerFlow's _assess_and_transition: the new state and the
// hint to queue ("" for none).
func (g *ToolProgressGuard) transition(st toolPhase, meta ToolMeta, content string) (toolPhase, string) {
	if st.phase == phaseBlocked {
		return st, ""
	}
	count := st.problems + 1
	if !meta.RecoverableByModel && meta.RecommendedNextAction == "stop" {
		st.phase, st.problems, st.blockReason = phaseBlocked, count, blockReasonText(meta)
		return st, ""
	}
	var ws map[string]bool
	if meta.Status == "success" {
		ws = wordSet(content)
	}
	problem := meta.Status == "error" || meta.Status == "partial_success" ||
		(meta.Status == "success" && nearDuplicate(ws, st.recent, g.cfg.JaccardSimilarityThreshold, g.cfg.MinWordCountForSimilarity))
	if !problem {
		recent := append(slices.Clone(st.recent), ws)
		if len(recent) > recentWordSets {
			recent = recent[len(recent)-recentWordSets:]
		}
		return toolPhase{phase: phaseActive, recent: recent}, ""
	}
	st.problems = count
	switch {
	case count >= g.cfg.StagnationThreshold+g.cfg.WarnEscalationCount && !meta.RecoverableByModel:
		st.phase, st.blockReason = phaseBlocked, blockReasonText(meta)
		return st, ""
	case count >= g.cfg.StagnationThreshold:
		st.phase = phaseWarned
		return st, hintText(meta)
	}
	return st, ""
}

// resultMeta is the result's deerflow_tool_meta, as a middleware inside
// the budget stamped it, or as the loop will stamp it (ClassifyResult).
func resultMeta(res *tool.Result) (ToolMeta, bool) {
	raw, ok := res.Meta[ToolMetaKey]
	if !ok || raw == nil {
		return ClassifyResult(res), true
	}
	if m, ok := raw.(ToolMeta); ok {
		return m, true
	}
	mm, ok := raw.(map[string]any)
	if !ok {
		return ToolMeta{}, false
	}
	status, ok1 := mm["status"].(string)
	rec, ok2 := mm["recoverable_by_model"].(bool)
	next, ok3 := mm["recommended_next_action"].(string)
	if !ok1 || !ok2 || !ok3 {
		return ToolMeta{}, false
	}
	m := ToolMeta{Status: status, RecoverableByModel: rec, RecommendedNextAction: next}
	m.Source, _ = mm["source"].(string)
	if et, ok := mm["error_type"].(string); ok {
		m.ErrorType = &et
	}
	return m, true
}

// wordSet is DeerFlow's word_set: the distinct lower-case words of three
// or more word characters in the first 8192 characters.
func wordSet(content string) map[string]bool {
	if r := []rune(content); len(r) > maxWordSetChars {
		content = string(r[:maxWordSetChars])
	}
	words := strings.FieldsFunc(strings.ToLower(content), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r))
	})
	set := map[string]bool{}
	for _, w := range words {
		if len([]rune(w)) >= 3 {
			set[w] = true
		}
	}
	return set
}

// nearDuplicate is DeerFlow's is_near_duplicate: whether current is at
// least threshold similar (Jaccard) to one of the last three recent sets,
// both having at least minWords words.
func nearDuplicate(current map[string]bool, recent []map[string]bool, threshold float64, minWords int) bool {
	if len(current) < minWords {
		return false
	}
	for _, prev := range recent[max(0, len(recent)-recentWordSets):] {
		if len(prev) < minWords {
			continue
		}
		inter := 0
		for w := range current {
			if prev[w] {
				inter++
			}
		}
		union := len(current) + len(prev) - inter
		if union > 0 && float64(inter)/float64(union) >= threshold {
			return true
		}
	}
	return false
}

// hintText is DeerFlow's _format_hint.
func hintText(m ToolMeta) string {
	actions := map[string]string{
		"rewrite_query":   "Try rephrasing your search query with different keywords or approach.",
		"try_alternative": "Consider using a different tool or strategy.",
		"summarize":       "Consider summarizing your current findings and moving forward.",
		"stop":            "Do not retry this operation — it is not recoverable.",
		"continue":        "Try rephrasing your query or using a different search term.",
	}
	bases := map[string]string{
		"no_results":      "[PROGRESS HINT] Your search returned no results.",
		"not_found":       "[PROGRESS HINT] The resource was not found repeatedly.",
		"rate_limited":    "[PROGRESS HINT] The tool is being rate-limited.",
		"transient":       "[PROGRESS HINT] The tool encountered repeated transient failures.",
		"partial_success": "[PROGRESS HINT] The tool has returned incomplete results multiple times.",
		"success":         "[PROGRESS HINT] The tool is returning duplicate results.",
	}
	key := m.Status
	if m.ErrorType != nil && *m.ErrorType != "" {
		key = *m.ErrorType
	}
	base, ok := bases[key]
	if !ok {
		base = "[PROGRESS HINT] The tool is not producing new information."
	}
	return strings.TrimSpace(base + " " + actions[m.RecommendedNextAction])
}

// blockReasonText is DeerFlow's _block_reason.
func blockReasonText(m ToolMeta) string {
	reasons := map[string]string{
		"no_results":   "Repeated no-results — rewrite your query or try a different tool.",
		"not_found":    "Repeated not-found — rewrite your query or try a different resource.",
		"rate_limited": "Repeated rate-limiting — summarize current findings and proceed.",
		"transient":    "Repeated transient failures — try a different approach.",
		"auth":         "Authentication failure — this tool cannot be used.",
		"config":       "Tool is not configured — this tool cannot be used.",
		"internal":     "Repeated internal errors — this tool is unavailable.",
	}
	if m.ErrorType != nil {
		if r, ok := reasons[*m.ErrorType]; ok {
			return r
		}
	}
	return "Tool has not produced new information after multiple attempts — summarize and move on."
}

// dedupe keeps the first of equal hints, in order.
func dedupe(hints []string) []string {
	seen := make(map[string]bool, len(hints))
	out := hints[:0:0]
	for _, h := range hints {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}
