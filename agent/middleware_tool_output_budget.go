package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strings"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// DefaultToolResultsDir is the default tool_output.storage_subdir, the
// folder under a thread's outputs that holds saved tool outputs
// (DeerFlow's TOOL_RESULTS_DIRNAME).
const DefaultToolResultsDir = ".tool-results"

// fallbackMarker is DeerFlow's marker of a head + tail truncation, made
// when an output could not be saved.
const fallbackMarker = "\n\n[... %d chars omitted from %s output. Persistent storage unavailable. Consider narrowing the query or using more specific parameters.]\n\n"

// ToolOutputBudgetOptions configures [NewToolOutputBudget].
type ToolOutputBudgetOptions struct {
	// Config is the tool_output section as loaded (config.Parse starts it
	// from DeerFlow's defaults, enabled, when the section is absent). The
	// zero value disables the budget; the ceiling applies regardless.
	Config config.ToolOutput
	// Layout locates each thread's outputs folder. Nil saves nothing:
	// oversized outputs are cut instead (fallback truncation, ceiling).
	Layout *vpath.Layout
	// Logger receives a line for every saved or cut output; nil discards.
	Logger *slog.Logger
}

// ToolOutputBudget is DeerFlow's ToolOutputBudgetMiddleware, with Antler's
// hard ceiling on top.
//
// Budget (tool_output, when enabled): a tool result whose text is longer
// than externalize_min_chars characters (tool_overrides[name] for that
// tool; 0 turns saving off) is written whole to the thread's outputs
// folder, under storage_subdir, as {tool}-{12 hex digits}.txt (.log for
// bash and web_fetch), and replaced by a typed synopsis (JSON shape, keys,
// counts and samples; CSV/TSV columns; YAML keys; XML root and children;
// code imports and symbols; text counts and headers; a raw head and tail
// sample of preview_head_chars and preview_tail_chars) that names the
// file for read_file with start_line and end_line. When the file cannot
// be written (no thread, no layout, a write error), a result longer than
// fallback_max_chars is cut to its first fallback_head_chars and last
// fallback_tail_chars characters around DeerFlow's omission marker, never
// longer than fallback_max_chars in all. Tools in exempt_tools (read_file
// by default, so that reading a saved output never saves it again) and
// results holding images are left alone. Error results are budgeted too,
// as in DeerFlow. Before each model request, tool messages already in the
// thread that exceed the budget are cut the fallback way (DeerFlow's
// wrap_model_call).
//
// Media (always, first): the images and other binary blocks of a result
// are saved to files there and replaced by lines naming them, within the
// bounds of maxToolResultImages and its siblings (5 images of 5 MiB, 8
// other blocks of 16 MiB per result); see externalizeMedia.
//
// Ceiling (always, even when the budget is disabled or the tool exempt):
// see [MaxToolResultBytes].
//
// One ToolOutputBudget serves every run; it is safe for concurrent use.
type ToolOutputBudget struct {
	cfg    config.ToolOutput
	exempt map[string]bool
	store  toolResultStore
	logger *slog.Logger
}

// NewToolOutputBudget returns the budget of o.
func NewToolOutputBudget(o ToolOutputBudgetOptions) *ToolOutputBudget {
	cfg := o.Config
	cfg.StorageSubdir = cmp.Or(cfg.StorageSubdir, DefaultToolResultsDir)
	exempt := make(map[string]bool, len(cfg.ExemptTools))
	for _, n := range cfg.ExemptTools {
		exempt[n] = true
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &ToolOutputBudget{cfg: cfg, exempt: exempt, store: toolResultStore{layout: o.Layout, subdir: cfg.StorageSubdir},
		logger: logger}
}

// ToolMiddleware budgets, then caps, the result of every tool call. Place
// it outermost, so that it sees every result the model will read.
func (b *ToolOutputBudget) ToolMiddleware() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			res, err := next(ctx, call, args)
			if err != nil || res == nil {
				return res, err
			}
			return b.apply(call, res), nil
		}
	}
}

// ModelMiddleware cuts the tool messages of a model request that exceed
// the budget (fallback truncation, when enabled) or the ceiling (always).
// The thread state is not changed; only the request is.
func (b *ToolOutputBudget) ModelMiddleware() tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if call == nil || call.Request == nil {
				return next(ctx, call)
			}
			var req *model.Request
			for i, m := range call.Request.Messages {
				text, ok := b.historyText(m)
				if !ok {
					continue
				}
				if req == nil {
					req = call.Request.Clone()
				}
				req.Messages[i].Content = text
			}
			if req == nil {
				return next(ctx, call)
			}
			c := *call
			c.Request = req
			return next(ctx, &c)
		}
	}
}

// historyText returns the text a tool message of a request is cut to,
// and false when it stays as it is.
func (b *ToolOutputBudget) historyText(m model.Message) (string, bool) {
	if m.Role != model.RoleTool {
		return "", false
	}
	text, changed := m.Content, false
	if b.cfg.Enabled && !b.exempt[m.Name] && len(m.Parts) == 0 {
		if t := b.trigger(m.Name); t >= 0 && len(text) > t {
			if n := charLen(text); n > t {
				if r, ok := b.budgetText(nil, m.Name, text, n, false); ok {
					text, changed = r, true
				}
			}
		}
	}
	if len(text) > MaxToolResultBytes {
		text, changed = cutToCeiling(text, MaxToolResultBytes, ceilingNote{}), true
	}
	return text, changed
}

// apply budgets and caps one result.
func (b *ToolOutputBudget) apply(call *tool.Call, res *tool.Result) *tool.Result {
	name := toolCallName(call)
	out := b.externalizeMedia(call, name, res)
	// A result that held images is multimodal, which DeerFlow does not
	// budget; the lines that now stand for its images change nothing.
	if _, textOnly := resultText(res); b.cfg.Enabled && !b.exempt[name] && textOnly {
		out = b.budget(call, name, out)
	}
	return b.ceil(call, name, out)
}

// budget is DeerFlow's _patch_tool_message for a result: res itself when
// it needs no change.
func (b *ToolOutputBudget) budget(call *tool.Call, name string, res *tool.Result) *tool.Result {
	t := b.trigger(name)
	if t < 0 {
		return res
	}
	text, ok := resultText(res)
	if !ok || len(text) <= t { // a byte count is never below the character count
		return res
	}
	n := charLen(text)
	if n <= t {
		return res
	}
	repl, ok := b.budgetText(call, name, text, n, true)
	if !ok {
		return res
	}
	return withText(res, repl)
}

// threshold is the externalisation threshold of a tool.
func (b *ToolOutputBudget) threshold(name string) int {
	if v, ok := b.cfg.ToolOverrides[name]; ok {
		return v
	}
	return b.cfg.ExternalizeMinChars
}

// trigger is DeerFlow's _effective_trigger: the smallest length that can
// change a result of the tool, or -1 when nothing can.
func (b *ToolOutputBudget) trigger(name string) int {
	t := -1
	if v := b.threshold(name); v > 0 {
		t = v
	}
	if f := b.cfg.FallbackMaxChars; f > 0 && (t < 0 || f < t) {
		t = f
	}
	return t
}

// budgetText is DeerFlow's _budget_content for a text of n characters:
// the preview of the saved file, or the fallback truncation, and false
// when the text stays. persist false never saves (model requests).
func (b *ToolOutputBudget) budgetText(call *tool.Call, name, text string, n int, persist bool) (string, bool) {
	threshold, fb := b.threshold(name), b.cfg.FallbackMaxChars
	if threshold <= 0 && fb <= 0 {
		return "", false
	}
	if n <= threshold && n <= fb {
		return "", false
	}
	if threshold > 0 && n > threshold && persist {
		vp, err := b.store.saveText(callUser(call), callThread(call), name, toolResultExt(name), text)
		if err == nil {
			b.logger.Info("externalized tool output", "tool", name, "chars", n, "path", vp)
			return renderPreview(text, name, vp, b.cfg.PreviewHeadChars, b.cfg.PreviewTailChars), true
		}
		b.logger.Warn("could not save tool output; truncating instead", "tool", name, "chars", n, "err", err)
	}
	if fb > 0 && n > fb {
		b.logger.Warn("fallback-truncating tool output", "tool", name, "chars", n, "max_chars", fb)
		return buildFallback(text, name, fb, b.cfg.FallbackHeadChars, b.cfg.FallbackTailChars), true
	}
	return "", false
}

// resultText is the text a model reads of res (DeerFlow's _message_text),
// and false when res holds an image (multimodal results are not
// budgeted).
func resultText(res *tool.Result) (string, bool) {
	for _, c := range res.Content {
		if c.Type == tool.BlockImage {
			return "", false
		}
	}
	return res.TextContent(), true
}

// withText returns a copy of res whose content is text alone. A result
// that no middleware classified yet keeps the classification of its
// original content, as DeerFlow's tool error handling (inside the
// budget) would have stamped it.
func withText(res *tool.Result, text string) *tool.Result {
	out := *res
	out.Content = []tool.Block{{Type: tool.BlockText, Text: text}}
	if res.Failure == nil && res.Meta[ToolMetaKey] == nil {
		out.Meta = maps.Clone(res.Meta)
		if out.Meta == nil {
			out.Meta = map[string]any{}
		}
		out.Meta[ToolMetaKey] = ClassifyResult(res).Map()
	}
	return &out
}

// buildFallback is DeerFlow's _build_fallback: head and tail around the
// omission marker, at most maxChars characters in all, the head ending
// and the tail starting on a line boundary where one is near.
func buildFallback(content, toolName string, maxChars, headChars, tailChars int) string {
	total := charLen(content)
	if maxChars <= 0 || total <= maxChars {
		return content
	}
	overhead := charLen(fmt.Sprintf(fallbackMarker, total, toolName))
	if overhead >= maxChars {
		return charPrefix(content, maxChars)
	}
	budget := maxChars - overhead
	head := min(headChars, budget)
	tail := min(tailChars, max(0, budget-head))
	headEnd := snapEnd(content, total, min(head, total))
	tailStart := snapStart(content, total, max(headEnd, total-tail))
	out := charPrefix(content, headEnd)
	omitted := total - headEnd - (total - tailStart)
	out += fmt.Sprintf(fallbackMarker, omitted, toolName)
	if tailStart < total {
		out += content[charOffset(content, tailStart):]
	}
	return out
}

// snapEnd is DeerFlow's _snap_to_line_boundary for an end offset (in
// characters, of a text of total characters): just after the last
// newline in the second half of text[:pos], or pos.
func snapEnd(text string, total, pos int) int {
	if pos <= 0 || pos >= total {
		return pos
	}
	half := pos / 2
	from, to := charOffset(text, half), charOffset(text, pos)
	if i := strings.LastIndexByte(text[from:to], '\n'); i >= 0 {
		return half + charLen(text[from:from+i]) + 1
	}
	return pos
}

// snapStart is DeerFlow's _snap_start_to_line_boundary for a start
// offset: just after the first newline in the first half of text[pos:],
// or pos. It never moves backwards.
func snapStart(text string, total, pos int) int {
	if pos <= 0 || pos >= total {
		return pos
	}
	half := pos + (total-pos)/2
	from := charOffset(text, pos)
	to := from + charOffset(text[from:], half-pos)
	if i := strings.IndexByte(text[from:to], '\n'); i >= 0 {
		return pos + charLen(text[from:from+i]) + 1
	}
	return pos
}

func toolCallName(call *tool.Call) string {
	if call == nil || call.Name == "" {
		return "unknown"
	}
	return call.Name
}

// callThread is the call's thread, or the runtime context's thread_id.
func callThread(call *tool.Call) string {
	if call == nil {
		return ""
	}
	return cmp.Or(call.ThreadID, call.ContextString("thread_id"))
}

// callUser is the call's user, or the runtime context's user_id, or
// DeerFlow's "default".
func callUser(call *tool.Call) string {
	if call == nil {
		return "default"
	}
	return cmp.Or(call.UserID, call.ContextString("user_id"), "default")
}
