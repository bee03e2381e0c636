package agent

import (
	"cmp"
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/tool"
)

// ToolMetaKey is the key of the result classification that ToolErrors
// stamps into every tool message's metadata (DeerFlow's
// additional_kwargs.deerflow_tool_meta).
const ToolMetaKey = "deerflow_tool_meta"

// ToolMeta classifies a tool result for downstream consumers (tool
// progress tracking, clients) so that they need not parse texts.
type ToolMeta struct {
	// Status is "success", "error" or "partial_success".
	Status string `json:"status"`
	// ErrorType is auth, rate_limited, transient, config, permission,
	// no_results, not_found, internal or unknown (nil on success).
	ErrorType *string `json:"error_type"`
	// RecoverableByModel says whether the model can fix it itself.
	RecoverableByModel bool `json:"recoverable_by_model"`
	// RecommendedNextAction is continue, rewrite_query, try_alternative,
	// summarize or stop.
	RecommendedNextAction string `json:"recommended_next_action"`
	// Source is exception, tool_return or content_analysis.
	Source string `json:"source"`
}

// Map returns the metadata as the JSON object stored in a message.
func (m ToolMeta) Map() map[string]any {
	var et any
	if m.ErrorType != nil {
		et = *m.ErrorType
	}
	return map[string]any{"status": m.Status, "error_type": et, "recoverable_by_model": m.RecoverableByModel,
		"recommended_next_action": m.RecommendedNextAction, "source": m.Source}
}

type errorRule struct {
	keywords    []string
	errorType   string
	recoverable bool
	next        string
}

// errorRules are DeerFlow's keyword classes, checked in order.
var errorRules = []errorRule{
	{[]string{"401", "403", "unauthorized", "authentication", "invalid api key"}, "auth", false, "stop"},
	{[]string{"rate limit", "rate limited", "rate_limit"}, "rate_limited", false, "summarize"},
	{[]string{"timeout", "timed out", "connection", "network error", "temporarily unavailable"}, "transient", false, "try_alternative"},
	{[]string{"not configured", "not installed", "missing required", "disabled", "no api key"}, "config", false, "stop"},
	{[]string{"permission denied", "access denied", "path traversal", "forbidden"}, "permission", true, "try_alternative"},
	{[]string{"no results found", "no content found", "no images found", "no results"}, "no_results", true, "rewrite_query"},
	{[]string{"not found", "no such file", "does not exist", "404"}, "not_found", true, "rewrite_query"},
	{[]string{"unexpected error", "internal error", "500"}, "internal", false, "stop"},
}

var (
	// numericKeyword matches bare status codes on word boundaries so that
	// "took 500ms" is not an internal error.
	numericKeyword = buildNumericKeywords()
	partialMarkers = []string{"partial results", "limited results", "truncated", "results may be incomplete",
		"no results found", "no content found", "no images found"}
	zeroErrorStrings = map[string]bool{"none": true, "null": true, "false": true, "no": true, "ok": true,
		"success": true, "n/a": true, "": true}
)

func buildNumericKeywords() map[string]*regexp.Regexp {
	out := map[string]*regexp.Regexp{}
	for _, r := range errorRules {
		for _, kw := range r.keywords {
			if strings.Trim(kw, "0123456789") == "" {
				out[kw] = regexp.MustCompile(`\b` + kw + `\b`)
			}
		}
	}
	return out
}

func classifyErrorText(text string) ToolMeta {
	lower := strings.ToLower(text)
	for _, r := range errorRules {
		for _, kw := range r.keywords {
			hit := false
			if re, ok := numericKeyword[kw]; ok {
				hit = re.MatchString(lower)
			} else {
				hit = strings.Contains(lower, kw)
			}
			if hit {
				et := r.errorType
				return ToolMeta{Status: "error", ErrorType: &et, RecoverableByModel: r.recoverable, RecommendedNextAction: r.next}
			}
		}
	}
	et := "unknown"
	return ToolMeta{Status: "error", ErrorType: &et, RecoverableByModel: true, RecommendedNextAction: "try_alternative"}
}

// jsonErrorText returns the "error" field of a JSON object result when it
// is a real error (not null, false, "", "none", "ok", ...).
func jsonErrorText(content string) (string, bool) {
	var m map[string]any
	if err := json.Unmarshal([]byte(content), &m); err != nil || m == nil {
		return "", false
	}
	e, ok := m["error"]
	if !ok || !pyTruthy(e) {
		return "", false
	}
	if s, ok := e.(string); ok {
		if zeroErrorStrings[strings.ToLower(strings.TrimSpace(s))] {
			return "", false
		}
		return s, true
	}
	b, _ := json.Marshal(e)
	return string(b), true
}

// ClassifyResult is DeerFlow's normalize_tool_message: it classifies a
// result by its error flag, its "Error:" prefix, a JSON {"error": ...}
// body, or partial-result markers.
func ClassifyResult(res *tool.Result) ToolMeta {
	content := res.TextContent()
	var m ToolMeta
	switch {
	case res.IsError && !strings.HasPrefix(content, "Error:"):
		if e, ok := jsonErrorText(content); ok {
			m = classifyErrorText(e)
		} else if isJSONObject(content) {
			et := "unknown"
			m = ToolMeta{Status: "error", ErrorType: &et, RecoverableByModel: true, RecommendedNextAction: "try_alternative"}
		} else {
			m = classifyErrorText(content)
		}
	case strings.HasPrefix(content, "Error:"):
		m = classifyErrorText(content[len("Error:"):])
	default:
		if e, ok := jsonErrorText(content); ok {
			m = classifyErrorText(e)
			break
		}
		if containsLowered(content, partialMarkers) {
			return ToolMeta{Status: "partial_success", RecoverableByModel: true, RecommendedNextAction: "rewrite_query", Source: "content_analysis"}
		}
		return ToolMeta{Status: "success", RecoverableByModel: true, RecommendedNextAction: "continue", Source: "content_analysis"}
	}
	m.Source = "tool_return"
	return m
}

// loweredChunk is the piece of a text containsLowered lowers at a time,
// and loweredOverlap how far consecutive pieces overlap (more than the
// bytes of any marker's source characters).
const (
	loweredChunk   = 64 << 10
	loweredOverlap = 256
)

// containsLowered reports whether strings.ToLower(s) contains one of the
// lower-case markers, without lowering a large s whole: a tool output of
// many megabytes is lowered piece by piece, split on character
// boundaries.
func containsLowered(s string, markers []string) bool {
	for start := 0; start < len(s); {
		end := min(len(s), start+loweredChunk)
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		lower := strings.ToLower(s[start:end])
		for _, m := range markers {
			if strings.Contains(lower, m) {
				return true
			}
		}
		if end == len(s) {
			break
		}
		next := end - loweredOverlap
		for next > start && !utf8.RuneStart(s[next]) {
			next--
		}
		start = max(next, start+1)
	}
	return false
}

func isJSONObject(s string) bool {
	var m map[string]any
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

// classified returns res with its classification under ToolMetaKey in
// Meta, DeerFlow's ToolErrorHandlingMiddleware's stamp: a failure that
// tool.Invoke made of a Go error or a panic is classified from its kind
// and detail (Source "exception", always); any other result keeps a
// classification it already has, or gets ClassifyResult's.
func classified(res *tool.Result) *tool.Result {
	var m ToolMeta
	switch {
	case res.Failure != nil:
		detail := cmp.Or(res.Failure.Detail, res.Failure.Kind)
		if d := []rune(detail); len(d) > tool.MaxFailureDetail {
			detail = string(d[:tool.MaxFailureDetail-3]) + "..."
		}
		m = classifyErrorText(res.Failure.Kind + ": " + detail)
		m.Source = "exception"
	case res.Meta[ToolMetaKey] != nil:
		return res
	default:
		m = ClassifyResult(res)
	}
	out := *res
	out.Meta = make(map[string]any, len(res.Meta)+1)
	for k, v := range res.Meta {
		out.Meta[k] = v
	}
	out.Meta[ToolMetaKey] = m.Map()
	return &out
}
