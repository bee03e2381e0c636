package agent

import (
	"cmp"
	"container/list"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// Loop detection texts (DeerFlow's).
const (
	LoopWarningText      = "[LOOP DETECTED] You are repeating the same tool calls. Stop calling tools and produce your final answer now. If you cannot complete the task, summarize what you accomplished so far."
	LoopHardStopText     = "[FORCED STOP] Repeated tool calls exceeded the safety limit. Producing final answer with results collected so far."
	toolFreqWarningText  = "[LOOP DETECTED] You have called %s %d times without producing a final answer. Stop calling tools and produce your final answer now. If you cannot complete the task, summarize what you accomplished so far."
	toolFreqHardStopText = "[FORCED STOP] Tool %s called %d times — exceeded the per-tool safety limit. Producing final answer with results collected so far."
	// LoopWarningName names the user message that carries a warning.
	LoopWarningName          = "loop_warning"
	maxPendingWarningsPerRun = 4
)

// LoopDetector is DeerFlow's LoopDetectionMiddleware. It tracks, per
// thread, the hashes of the tool-call sets the model asks for in a sliding
// window (layer 1: identical sets) and the names of the tools called
// (layer 2: one tool called too often with varying arguments).
//
// At the warning threshold the next model request gets a warning appended
// as a user message (after the tool results, so call/result pairing stays
// intact); at the hard limit the model's tool calls are stripped and the
// stop text appended, which forces a final answer (stop reason
// loop_capped). One LoopDetector is shared by all runs of an agent
// factory; it is safe for concurrent use and forgets the least recently
// used threads beyond MaxTrackedThreads.
type LoopDetector struct {
	cfg        config.LoopDetection
	freqWindow int
	logger     *slog.Logger

	mu           sync.Mutex
	threads      map[string]*list.Element // of *loopThread, guarded by mu
	lru          *list.List               // guarded by mu
	pending      map[[2]string][]string   // (thread, run) -> warnings, guarded by mu
	pendingOrder []([2]string)            // guarded by mu
}

type loopThread struct {
	id         string
	history    []string
	warned     map[string]bool
	names      []string
	counts     map[string]int
	freqWarned map[string]bool
}

// NewLoopDetector returns a detector with cfg's thresholds; zero fields
// take DeerFlow's defaults (warn 3, hard 5, window 20, 100 threads, tool
// frequency warn 30 / hard 50).
func NewLoopDetector(cfg config.LoopDetection, logger *slog.Logger) *LoopDetector {
	cfg.WarnThreshold = cmp.Or(cfg.WarnThreshold, 3)
	cfg.HardLimit = cmp.Or(cfg.HardLimit, 5)
	cfg.WindowSize = cmp.Or(cfg.WindowSize, 20)
	cfg.MaxTrackedThreads = cmp.Or(cfg.MaxTrackedThreads, 100)
	cfg.ToolFreqWarn = cmp.Or(cfg.ToolFreqWarn, 30)
	cfg.ToolFreqHardLimit = cmp.Or(cfg.ToolFreqHardLimit, 50)
	w := max(cfg.WindowSize, cfg.ToolFreqHardLimit)
	for _, o := range cfg.ToolFreqOverrides {
		w = max(w, o.HardLimit)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &LoopDetector{cfg: cfg, freqWindow: w, logger: logger,
		threads: map[string]*list.Element{}, lru: list.New(), pending: map[[2]string][]string{}}
}

// Middleware returns the model middleware.
func (d *LoopDetector) Middleware() tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			threadID := cmp.Or(call.ThreadID, "default")
			if warnings := d.drain(threadID, call.RunID); len(warnings) > 0 {
				c := *call
				req := call.Request.Clone()
				req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Name: LoopWarningName,
					Content: strings.Join(warnings, "\n\n")})
				c.Request = req
				call = &c
			}
			resp, err := next(ctx, call)
			if err != nil || resp == nil || len(resp.Message.ToolCalls) == 0 {
				return resp, err
			}
			text, hard := d.track(threadID, resp.Message.ToolCalls)
			switch {
			case hard:
				return capped(resp, withParagraph(resp.Message.Content, text), StopLoopCapped, nil), nil
			case text != "":
				d.queue(threadID, call.RunID, text)
			}
			return resp, nil
		}
	}
}

// drain returns and forgets the warnings queued for this run, and drops
// those left over by earlier runs of the thread.
func (d *LoopDetector) drain(threadID, runID string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := [2]string{threadID, runID}
	w := d.pending[key]
	for k := range d.pending {
		if k[0] == threadID {
			delete(d.pending, k)
		}
	}
	d.pendingOrder = slices.DeleteFunc(d.pendingOrder, func(k [2]string) bool { return k[0] == threadID })
	return w
}

func (d *LoopDetector) queue(threadID, runID, warning string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := [2]string{threadID, runID}
	w := d.pending[key]
	if !slices.Contains(w, warning) {
		w = append(w, warning)
	}
	if len(w) > maxPendingWarningsPerRun {
		w = w[len(w)-maxPendingWarningsPerRun:]
	}
	d.pending[key] = w
	d.pendingOrder = append(slices.DeleteFunc(d.pendingOrder, func(k [2]string) bool { return k == key }), key)
	for limit := max(1, d.cfg.MaxTrackedThreads*2); len(d.pendingOrder) > limit; {
		delete(d.pending, d.pendingOrder[0])
		d.pendingOrder = d.pendingOrder[1:]
	}
}

// track records one model response's tool calls and returns the warning
// or hard-stop text it triggers, if any.
func (d *LoopDetector) track(threadID string, calls []model.ToolCall) (text string, hard bool) {
	h := hashToolCalls(calls)
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.thread(threadID)
	t.history = append(t.history, h)
	if len(t.history) > d.cfg.WindowSize {
		t.history = t.history[len(t.history)-d.cfg.WindowSize:]
	}
	for w := range t.warned {
		if !slices.Contains(t.history, w) {
			delete(t.warned, w)
		}
	}
	count := 0
	for _, x := range t.history {
		if x == h {
			count++
		}
	}
	if count >= d.cfg.HardLimit {
		d.logger.Error("loop hard limit reached — forcing stop", "thread_id", threadID, "call_hash", h, "count", count)
		return LoopHardStopText, true
	}
	if count >= d.cfg.WarnThreshold && !t.warned[h] {
		t.warned[h] = true
		d.logger.Warn("repetitive tool calls detected — injecting warning", "thread_id", threadID, "call_hash", h, "count", count)
		return LoopWarningText, false
	}
	for _, c := range calls {
		name := c.Name
		if name == "" {
			continue
		}
		t.names = append(t.names, name)
		t.counts[name]++
		for len(t.names) > d.freqWindow {
			old := t.names[0]
			t.names = t.names[1:]
			if t.counts[old]--; t.counts[old] <= 0 {
				delete(t.counts, old)
			}
		}
		n := t.counts[name]
		warn, hardLimit := d.cfg.ToolFreqWarn, d.cfg.ToolFreqHardLimit
		if o, ok := d.cfg.ToolFreqOverrides[name]; ok {
			warn, hardLimit = o.Warn, o.HardLimit
		}
		if n >= hardLimit {
			d.logger.Error("tool frequency hard limit reached — forcing stop", "thread_id", threadID, "tool", name, "count", n)
			return fmt.Sprintf(toolFreqHardStopText, name, n), true
		}
		if n >= warn {
			if !t.freqWarned[name] {
				t.freqWarned[name] = true
				d.logger.Warn("tool frequency warning", "thread_id", threadID, "tool", name, "count", n)
				return fmt.Sprintf(toolFreqWarningText, name, n), false
			}
		} else {
			delete(t.freqWarned, name)
		}
	}
	return "", false
}

// thread returns the thread's tracking state, most recently used, and
// evicts the least recently used beyond MaxTrackedThreads. Call with mu
// held.
func (d *LoopDetector) thread(id string) *loopThread {
	if e, ok := d.threads[id]; ok {
		d.lru.MoveToBack(e)
		return e.Value.(*loopThread)
	}
	t := &loopThread{id: id, warned: map[string]bool{}, counts: map[string]int{}, freqWarned: map[string]bool{}}
	d.threads[id] = d.lru.PushBack(t)
	for d.lru.Len() > d.cfg.MaxTrackedThreads {
		old := d.lru.Remove(d.lru.Front()).(*loopThread)
		delete(d.threads, old.id)
		for k := range d.pending {
			if k[0] == old.id {
				delete(d.pending, k)
			}
		}
	}
	return t
}

// Reset forgets one thread ("" forgets all).
func (d *LoopDetector) Reset(threadID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if threadID == "" {
		d.threads, d.lru, d.pending, d.pendingOrder = map[string]*list.Element{}, list.New(), map[[2]string][]string{}, nil
		return
	}
	if e, ok := d.threads[threadID]; ok {
		d.lru.Remove(e)
		delete(d.threads, threadID)
	}
	for k := range d.pending {
		if k[0] == threadID {
			delete(d.pending, k)
		}
	}
}

// hashToolCalls is an order-independent digest of a set of tool calls by
// name and stable argument key.
func hashToolCalls(calls []model.ToolCall) string {
	keys := make([]string, len(calls))
	for i, c := range calls {
		args, fallback := normalizeCallArgs(c.Arguments)
		keys[i] = c.Name + ":" + stableToolKey(c.Name, args, fallback)
	}
	slices.Sort(keys)
	b, _ := json.Marshal(keys)
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])[:12]
}

// normalizeCallArgs decodes arguments to an object; anything else gives
// a stable fallback key instead.
func normalizeCallArgs(raw json.RawMessage) (map[string]any, *string) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return map[string]any{}, &s
	}
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	b, _ := json.Marshal(v)
	k := string(b)
	return map[string]any{}, &k
}

// stableToolKey keys a call by its salient arguments: read_file by path
// and 200-line bucket, write_file and str_replace by all arguments, other
// tools by path/url/query/command/pattern/glob/cmd when present.
func stableToolKey(name string, args map[string]any, fallback *string) string {
	canon := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	if name == "read_file" && fallback == nil {
		path := pyStr(args["path"])
		if !pyTruthy(args["path"]) {
			path = ""
		}
		start := toInt(args["start_line"], 1)
		end := toInt(args["end_line"], start)
		if start > end {
			start, end = end, start
		}
		return fmt.Sprintf("%s:%d-%d", path, (max(start, 1)-1)/200, (max(end, 1)-1)/200)
	}
	if name == "write_file" || name == "str_replace" {
		if fallback != nil {
			return *fallback
		}
		return canon(args)
	}
	stable := map[string]any{}
	for _, f := range []string{"path", "url", "query", "command", "pattern", "glob", "cmd"} {
		if v, ok := args[f]; ok && v != nil {
			stable[f] = v
		}
	}
	if len(stable) > 0 {
		return canon(stable)
	}
	if fallback != nil {
		return *fallback
	}
	return canon(args)
}

func toInt(v any, def int) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return n
		}
	case bool:
		if x {
			return 1
		}
		return 0
	}
	return def
}
