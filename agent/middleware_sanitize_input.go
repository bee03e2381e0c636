package agent

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// This file is DeerFlow's InputSanitizationMiddleware: before each model
// call, the last genuine user message of the request has its forged
// framework tags (<system-reminder>, <system>, <soul>, ...) escaped to
// &lt;...&gt; and is framed in plain-text boundary markers. The rewrite
// is of the request only; the thread state keeps what the user sent.
// The same neutralisation guards remote tool results
// (middleware_sanitize_tool_results.go). DeerFlow has no config key for
// either: both are always on, for the lead agent and subagents.

// OriginalUserContentKey is the message metadata key holding the user's
// own text when the server prepended a block of its own (the uploaded
// files list): only that text is sanitised, so the server's block keeps
// its tags. The gateway removes the key from what clients send
// (DeerFlow's ORIGINAL_USER_CONTENT_KEY).
const OriginalUserContentKey = "original_user_content"

// DeerFlow's boundary markers around the user's text, and the look-alike
// forms that replace them inside untrusted text.
const (
	userInputBegin   = "--- BEGIN USER INPUT ---"
	userInputEnd     = "--- END USER INPUT ---"
	neutralizedBegin = "[BEGIN USER INPUT]"
	neutralizedEnd   = "[END USER INPUT]"
)

// blockedTagNames returns the tag names escaped in untrusted text:
// DeerFlow's list (its framework's authority blocks and common injection
// tags), then the blocks Antler's own prompts emit. The anti-drift test
// (TestSanitizeInput_denylistCoversFrameworkAuthorityBlocks) fails when a
// prompt gains a block that is neither here nor exempted.
func blockedTagNames() []string {
	return []string{
		// DeerFlow's framework blocks.
		"system-reminder", "system_reminder", "memory", "current_date", "think",
		"analysis", "role", "soul", "self_update", "thinking_style",
		"clarification_system", "critical_reminders", "response_style", "citations",
		"uploaded_files", "current_uploads", "subagent_system", "skill_system",
		"skill_index", "available_skills", "disabled_skills", "memory_tool_system",
		"todo_list_system", "durable_context_data", "slash_skill_activation",
		"mcp_routing_hints", "available-deferred-tools", "goal_continuation",
		"background_task_event", "file_editing_workflow", "guidelines",
		"output_format", "working_directory", "tool_restrictions",
		// DeerFlow's common injection tags.
		"system", "instruction", "important", "override", "ignore", "prompt",
		// Antler's own prompt blocks (agent/prompt.md, skills/policy.go).
		"context", "workspace", "clarification", "subagents", "skill_activation",
	}
}

// blockedTagRE matches a whole blocked tag in any case: <tag>, </tag>,
// <tag attrs>, <tag/>, and a bare <tag without its closing bracket.
var blockedTagRE = func() *regexp.Regexp {
	names := slices.Sorted(slices.Values(blockedTagNames()))
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n)
	}
	return regexp.MustCompile(`(?i)<\s*/?\s*(?:` + strings.Join(names, "|") + `)\b[^>]*>?`)
}()

var angleEscaper = strings.NewReplacer("<", "&lt;", ">", "&gt;")

var boundaryNeutralizer = strings.NewReplacer(userInputBegin, neutralizedBegin, userInputEnd, neutralizedEnd)

// escapeBlockedTags HTML-escapes the angle brackets of every blocked tag.
func escapeBlockedTags(text string) string {
	return blockedTagRE.ReplaceAllStringFunc(text, angleEscaper.Replace)
}

// NeutralizeUntrustedTags is DeerFlow's neutralize_untrusted_tags, for
// text from outside the trust boundary that enters the model's context
// as data (also the file names and paths of the gateway's uploads block):
// blocked tags are escaped and the boundary markers replaced by their
// look-alikes. Blank text is returned unchanged.
func NeutralizeUntrustedTags(text string) string {
	if strings.TrimSpace(text) == "" {
		return text
	}
	return boundaryNeutralizer.Replace(escapeBlockedTags(text))
}

// frameUntrustedText is DeerFlow's frame_untrusted_text: the text
// neutralised, then wrapped in the boundary markers. Blank text is
// returned unchanged; text already wrapped exactly once is kept, after
// neutralising markers forged inside it.
func frameUntrustedText(text string) string {
	if strings.TrimSpace(text) == "" {
		return text
	}
	text = escapeBlockedTags(text)
	if len(text) >= len(userInputBegin)+len(userInputEnd) &&
		strings.HasPrefix(text, userInputBegin) && strings.HasSuffix(text, userInputEnd) {
		inner := text[len(userInputBegin) : len(text)-len(userInputEnd)]
		return userInputBegin + boundaryNeutralizer.Replace(inner) + userInputEnd
	}
	return userInputBegin + "\n" + boundaryNeutralizer.Replace(text) + "\n" + userInputEnd
}

// isGenuineUserMessage is DeerFlow's _is_genuine_user_message: a user
// message that is not the summary, and not hidden unless it carries a
// valid human_input_response (a clarification answer sent hidden).
func isGenuineUserMessage(m model.Message) bool {
	if m.Role != model.RoleUser || m.Name == "summary" {
		return false
	}
	if hidden, _ := m.Meta["hide_from_ui"].(bool); hidden && !validHumanInputResponse(m.Meta) {
		return false
	}
	return true
}

// validHumanInputResponse is DeerFlow's read_human_input_response != None:
// a version 1 human_input_response with source, request_id and value,
// and an option_id when it answers with an option.
func validHumanInputResponse(meta map[string]any) bool {
	raw, _ := meta["human_input_response"].(map[string]any)
	if raw == nil || !isOne(raw["version"]) || raw["kind"] != "human_input_response" {
		return false
	}
	for _, k := range []string{"source", "request_id", "value"} {
		if s, _ := raw[k].(string); strings.TrimSpace(s) == "" {
			return false
		}
	}
	switch raw["response_kind"] {
	case "text":
		return true
	case "option":
		s, _ := raw["option_id"].(string)
		return strings.TrimSpace(s) != ""
	}
	return false
}

// isOne reports whether v is the number 1 as JSON or Go code spells it.
func isOne(v any) bool {
	switch n := v.(type) {
	case float64:
		return n == 1
	case int:
		return n == 1
	case int64:
		return n == 1
	}
	return false
}

// SanitizeInput returns DeerFlow's InputSanitizationMiddleware, the
// outermost model middleware of every agent, so that every inner
// middleware and the model see the sanitised request.
func SanitizeInput() tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if call == nil || call.Request == nil {
				return next(ctx, call)
			}
			msgs := call.Request.Messages
			for i := len(msgs) - 1; i >= 0; i-- {
				if !isGenuineUserMessage(msgs[i]) {
					continue
				}
				m, changed := sanitizeUserMessage(msgs[i], call)
				if !changed {
					break
				}
				c := *call
				c.Request = call.Request.Clone()
				c.Request.Messages[i] = m
				return next(ctx, &c)
			}
			return next(ctx, call)
		}
	}
}

// userText is the text of a user message as DeerFlow's
// message_content_to_text reads it: the content and the text parts,
// non-empty ones joined by newlines.
func userText(m model.Message) (string, int) {
	var parts []string
	if m.Content != "" {
		parts = append(parts, m.Content)
	}
	for _, p := range m.Parts {
		if p.Type == model.PartText && p.Text != "" {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n"), len(parts)
}

// sanitizeUserMessage returns m with its text sanitised and whether that
// changed anything. The text parts are merged into the content (DeerFlow
// collapses the text blocks into one); image parts keep their order.
func sanitizeUserMessage(m model.Message, call *tool.ModelCall) (model.Message, bool) {
	text, pieces := userText(m)
	if text == "" {
		return m, false
	}
	orig, present := m.Meta[OriginalUserContentKey]
	origText, isString := orig.(string)
	var processed string
	switch {
	case isString && origText == "":
		// An upload with no text of the user's: nothing of theirs to frame.
		processed = text
	case isString:
		framed := frameUntrustedText(origText)
		if framed == origText {
			processed = text
			break
		}
		if idx := strings.LastIndex(text, origText); idx >= 0 {
			processed = text[:idx] + framed
			break
		}
		if pieces >= 2 {
			return neutralizeAfterFirst(m, call), true
		}
		call.Log().Warn("sanitize input: the original user content is not in the message; sanitising all of it")
		processed = frameUntrustedText(text)
	default:
		processed = frameUntrustedText(text)
	}
	if processed == text {
		return m, false
	}
	out := m
	out.Content = processed
	out.Parts = nonTextParts(m.Parts)
	if !isString {
		if present {
			call.Log().Warn("sanitize input: replaced non-string " + OriginalUserContentKey + " metadata")
		}
		out.Meta = cloneMeta(m.Meta)
		out.Meta[OriginalUserContentKey] = text
	}
	return out, true
}

// neutralizeAfterFirst keeps the first text piece (the server's block)
// and neutralises every later text part on its own: DeerFlow's path for
// a message whose user text cannot be found in its merged text.
func neutralizeAfterFirst(m model.Message, call *tool.ModelCall) model.Message {
	call.Log().Warn("sanitize input: the original user content is not in the message; sanitising the user's parts one by one")
	out := m
	first := m.Content != ""
	out.Parts = make([]model.Part, len(m.Parts))
	for i, p := range m.Parts {
		if p.Type == model.PartText && p.Text != "" {
			if first {
				p.Text = NeutralizeUntrustedTags(p.Text)
			}
			first = true
		}
		out.Parts[i] = p
	}
	return out
}

func nonTextParts(parts []model.Part) []model.Part {
	var out []model.Part
	for _, p := range parts {
		if p.Type != model.PartText {
			out = append(out, p)
		}
	}
	return out
}

func cloneMeta(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
