package openai

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/model"
)

// MindIE's chat templates cannot take chat-completions tool calls or
// tool messages, and its streaming drops the choices when tools are
// bound. Options.TextToolCalls therefore sends the conversation as text
// the served model was trained on, asks without streaming when tools are
// bound, and reads the answer's <tool_call> blocks back as tool calls.

// wholeChunkRunes is the size of the text deltas a whole (not streamed)
// answer is replayed in, so a terminal or the frontend still renders it
// progressively.
const wholeChunkRunes = 15

// textEscaper escapes what would break the XML-like framing; quotes stay
// as they are.
var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// textConversation rewrites msgs for a text-only chat template: content
// is flattened to its text (images are dropped), an assistant message's
// tool calls become <tool_call> blocks in its text, a tool result becomes
// a user message wrapped in <tool_response> (escaped, so a result that
// contains the closing tag cannot end the framing early), and an empty
// text becomes a single space.
func textConversation(msgs []model.Message) []model.Message {
	out := make([]model.Message, 0, len(msgs))
	for _, msg := range msgs {
		if msg.Remove {
			continue
		}
		text := msg.Text()
		switch {
		case msg.Role == model.RoleAssistant && len(msg.ToolCalls) > 0:
			blocks := make([]string, 0, len(msg.ToolCalls))
			for _, tc := range msg.ToolCalls {
				blocks = append(blocks, toolCallBlock(tc))
			}
			full := strings.Join(blocks, "\n")
			if text != "" {
				full = text + "\n" + full
			}
			out = append(out, model.Message{Role: model.RoleAssistant, Content: nonEmpty(strings.TrimSpace(full))})
		case msg.Role == model.RoleTool:
			out = append(out, model.Message{Role: model.RoleUser,
				Content: "<tool_response>\n" + textEscaper.Replace(text) + "\n</tool_response>"})
		default:
			out = append(out, model.Message{Role: msg.Role, Content: nonEmpty(text)})
		}
	}
	return out
}

func nonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return " "
	}
	return s
}

// toolCallBlock renders one call as
// <tool_call> <function=NAME> <parameter=KEY>VALUE</parameter> </function> </tool_call>,
// with string values as they are and other values as JSON, in the order
// the arguments were written.
func toolCallBlock(tc model.ToolCall) string {
	var params []string
	for key, val := range orderedArguments(tc.Arguments) {
		v := string(val)
		var s string
		if json.Unmarshal(val, &s) == nil {
			v = s
		}
		params = append(params, fmt.Sprintf("<parameter=%s>%s</parameter>", textEscaper.Replace(key), textEscaper.Replace(v)))
	}
	return fmt.Sprintf("<tool_call> <function=%s> %s </function> </tool_call>", textEscaper.Replace(tc.Name), strings.Join(params, " "))
}

// orderedArguments yields the members of a JSON object in their order;
// anything that is not an object yields nothing.
func orderedArguments(raw json.RawMessage) func(yield func(string, json.RawMessage) bool) {
	return func(yield func(string, json.RawMessage) bool) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return
			}
			key, _ := tok.(string)
			var val json.RawMessage
			if dec.Decode(&val) != nil || !yield(key, val) {
				return
			}
		}
	}
}

var (
	toolCallTag  = regexp.MustCompile(`</?tool_call>`)
	functionTag  = regexp.MustCompile(`<function=([^>]+)>`)
	parameterTag = regexp.MustCompile(`(?s)<parameter=([^>]+)>(.*?)</parameter>`)
	codeFence    = regexp.MustCompile("```[\\s\\S]*?```")
	digitsOnly   = regexp.MustCompile(`^[0-9]+$`)
)

// span is one top-level <tool_call>...</tool_call> block of a text.
type span struct{ start, end, innerStart, innerEnd int }

// toolCallSpans returns the top-level blocks of s; nested blocks are
// inside their parent's span, an unclosed block is not a block.
func toolCallSpans(s string) []span {
	var out []span
	depth, start := 0, -1
	for _, m := range toolCallTag.FindAllStringIndex(s, -1) {
		if s[m[0]:m[1]] == "<tool_call>" {
			if depth == 0 {
				start = m[0]
			}
			depth++
			continue
		}
		if depth == 0 {
			continue
		}
		depth--
		if depth == 0 {
			out = append(out, span{start, m[1], start + len("<tool_call>"), m[0]})
		}
	}
	return out
}

// parseTextToolCalls removes the <tool_call> blocks from content and
// returns them as calls. A block without <function=...> is dropped.
// Parameters of blocks nested in a block belong to those blocks, not to
// it. A value that looks like JSON (an object, an array, true, false,
// null or digits) and parses is kept as that JSON, any other as a string.
func parseTextToolCalls(content string) (string, []model.ToolCall) {
	if !strings.Contains(content, "<tool_call>") {
		return content, nil
	}
	var clean strings.Builder
	var calls []model.ToolCall
	cursor := 0
	for _, sp := range toolCallSpans(content) {
		clean.WriteString(content[cursor:sp.start])
		cursor = sp.end
		inner := content[sp.innerStart:sp.innerEnd]
		fn := functionTag.FindStringSubmatch(inner)
		if fn == nil {
			continue
		}
		own := inner
		if nested := toolCallSpans(inner); len(nested) > 0 {
			var b strings.Builder
			at := 0
			for _, n := range nested {
				b.WriteString(inner[at:n.start])
				at = n.end
			}
			b.WriteString(inner[at:])
			own = b.String()
		}
		args := map[string]json.RawMessage{}
		for _, p := range parameterTag.FindAllStringSubmatch(own, -1) {
			args[html.UnescapeString(strings.TrimSpace(p[1]))] = parameterValue(html.UnescapeString(strings.TrimSpace(p[2])))
		}
		b, _ := json.Marshal(args)
		calls = append(calls, model.ToolCall{ID: textCallID(), Name: html.UnescapeString(strings.TrimSpace(fn[1])), Arguments: b})
	}
	clean.WriteString(content[cursor:])
	return strings.TrimSpace(clean.String()), calls
}

func parameterValue(v string) json.RawMessage {
	if strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{") || v == "true" || v == "false" || v == "null" || digitsOnly.MatchString(v) {
		if json.Valid([]byte(v)) {
			return json.RawMessage(v)
		}
	}
	b, _ := json.Marshal(v)
	return b
}

func textCallID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

// decodeEscapedNewlines turns the literal two characters \n into a
// newline outside ``` fences, where MindIE's gateway over-escapes them;
// fenced code keeps them.
func decodeEscapedNewlines(s string) string {
	if !strings.Contains(s, `\n`) {
		return s
	}
	var b strings.Builder
	at := 0
	for _, m := range codeFence.FindAllStringIndex(s, -1) {
		b.WriteString(strings.ReplaceAll(s[at:m[0]], `\n`, "\n"))
		b.WriteString(s[m[0]:m[1]])
		at = m[1]
	}
	b.WriteString(strings.ReplaceAll(s[at:], `\n`, "\n"))
	return b.String()
}

// generateWhole asks without streaming and replays the answer as events:
// the text in chunks of wholeChunkRunes, then one delta per tool call,
// then the response.
func (m *Model) generateWhole(ctx context.Context, params *chatRequest, yield func(model.Event, error) bool) *model.Response {
	whole := *params
	whole.Stream, whole.StreamOptions = false, nil
	body, err := whole.encode()
	if err != nil {
		yield(model.Event{}, m.wrap(ctx, fmt.Errorf("encoding the request: %w", err)))
		return nil
	}
	var cc chatCompletion
	if err := m.client.post(ctx, body, &cc); err != nil {
		yield(model.Event{}, m.wrap(ctx, err))
		return nil
	}
	resp, err := wholeResponse(&cc)
	if err != nil {
		yield(model.Event{}, m.wrap(ctx, err))
		return nil
	}
	for text := resp.Message.Content; text != ""; {
		n, i := 0, 0
		for i < len(text) && n < wholeChunkRunes {
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			n++
		}
		if !yield(model.Event{TextDelta: text[:i]}, nil) {
			return nil
		}
		text = text[i:]
	}
	for i, tc := range resp.Message.ToolCalls {
		if !yield(model.Event{ToolCallDelta: &model.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Arguments: string(tc.Arguments)}}, nil) {
			return nil
		}
	}
	if !yield(model.Event{Response: resp}, nil) {
		return nil
	}
	return resp
}

// wholeResponse reads a non-streamed completion: native tool calls and
// the <tool_call> blocks of the text, reasoning from reasoning_content
// or reasoning, the escaped newlines decoded.
func wholeResponse(cc *chatCompletion) (*model.Response, error) {
	if len(cc.Choices) == 0 {
		return nil, errEmptyStream
	}
	ch := cc.Choices[0]
	msg := model.Message{Role: model.RoleAssistant, Reasoning: ch.Message.text()}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Function.Name == "" {
			continue
		}
		id := tc.ID
		if id == "" {
			id = newCallID()
		}
		args := strings.TrimSpace(tc.Function.Arguments)
		if args == "" {
			args = "{}"
		}
		msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: id, Name: tc.Function.Name, Arguments: rawArguments(args)})
	}
	content, calls := parseTextToolCalls(decodeEscapedNewlines(ch.Message.Content))
	msg.Content = content
	msg.ToolCalls = append(msg.ToolCalls, calls...)
	resp := &model.Response{Message: msg, FinishReason: normaliseFinish(ch.FinishReason, len(msg.ToolCalls) > 0)}
	if ch.FinishReason != "" {
		resp.Metadata = map[string]any{model.MetaFinishReason: ch.FinishReason}
	}
	if u := cc.Usage; u.TotalTokens > 0 || u.PromptTokens > 0 || u.CompletionTokens > 0 {
		resp.Usage = model.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
		usage := resp.Usage
		resp.Message.Usage = &usage
	}
	return resp, nil
}
