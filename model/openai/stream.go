package openai

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/antlerhq/antler/model"
)

// assembler builds a response from streamed chunks. Tool calls are kept
// in slots keyed by the index the server sends; a server that repeats an
// index for a new call (a different id) gets a new slot, so calls are
// never glued together.
type assembler struct {
	text      strings.Builder
	reasoning strings.Builder
	calls     []*callSlot
	byIndex   map[int64]int // server index -> slot
	finish    string
	filter    any // the choice's content_filter_results (Azure), last seen
	usage     *model.Usage
	chunks    int

	details   bool // read reasoning_details first (Options.ReasoningDetails)
	thinkTags bool // move <think> blocks of the content into reasoning
	unescape  bool // literal \n outside code fences become newlines (MindIE)
}

type callSlot struct {
	id, name, signature string
	args                strings.Builder
}

// add folds one chunk into the response and returns the events it
// carries.
func (a *assembler) add(c chatChunk) []model.Event {
	a.chunks++
	var evs []model.Event
	if c.Usage != nil && (c.Usage.TotalTokens > 0 || c.Usage.PromptTokens > 0 || c.Usage.CompletionTokens > 0) {
		a.usage = &model.Usage{
			InputTokens:  c.Usage.PromptTokens,
			OutputTokens: c.Usage.CompletionTokens,
			TotalTokens:  c.Usage.TotalTokens,
		}
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // Antler never asks for n > 1
		}
		d := ch.Delta
		if r := a.reasoningOf(d); r != "" {
			a.reasoning.WriteString(r)
			evs = append(evs, model.Event{ReasoningDelta: r})
		}
		if content := d.Content; content != "" {
			if a.unescape {
				content = decodeEscapedNewlines(content)
			}
			a.text.WriteString(content)
			evs = append(evs, model.Event{TextDelta: content})
		}
		for _, tc := range d.ToolCalls {
			evs = append(evs, a.addCall(tc))
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
		if len(ch.ContentFilterResults) > 0 {
			a.filter = filterResults(ch.ContentFilterResults)
		}
	}
	return evs
}

// maxFilterResults bounds the content_filter_results object kept from a
// chunk; a larger one is dropped.
const maxFilterResults = 64 << 10

// filterResults decodes a choice's content_filter_results, or returns
// nil when it is empty, too large or not an object.
func filterResults(raw json.RawMessage) any {
	if len(raw) == 0 || len(raw) > maxFilterResults {
		return nil
	}
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil || len(v) == 0 {
		return nil
	}
	return v
}

func (a *assembler) addCall(tc deltaToolCall) model.Event {
	if a.byIndex == nil {
		a.byIndex = map[int64]int{}
	}
	slot, ok := a.byIndex[tc.Index]
	if ok && tc.ID != "" && a.calls[slot].id != "" && a.calls[slot].id != tc.ID {
		ok = false // same index reused for a new call
	}
	if !ok {
		slot = len(a.calls)
		a.calls = append(a.calls, &callSlot{})
		a.byIndex[tc.Index] = slot
	}
	s := a.calls[slot]
	if tc.ID != "" && s.id == "" {
		s.id = tc.ID
	}
	if tc.Function.Name != "" {
		s.name += tc.Function.Name
	}
	if sig := tc.signature(); sig != "" {
		s.signature = sig
	}
	s.args.WriteString(tc.Function.Arguments)
	return model.Event{ToolCallDelta: &model.ToolCallDelta{
		Index: slot, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments,
	}}
}

// reasoningOf reads the reasoning text that OpenAI-compatible servers
// put in non-standard delta fields.
func (a *assembler) reasoningOf(d chunkDelta) string {
	if a.details {
		if s := reasoningDetails(d.ReasoningDetails, false); s != "" {
			return s
		}
	}
	return d.text()
}

// text returns the first non-empty string among reasoning_content
// (DeepSeek, MiMo, StepFun's deepseek-style) and reasoning (Ollama,
// StepFun's default).
func (r reasoningFields) text() string {
	return cmp.Or(rawString(r.ReasoningContent), rawString(r.Reasoning))
}

// reasoningDetails joins the text of MiniMax's reasoning_details items
// ([{"type":"reasoning.text","text":"..."}]). A streamed fragment is
// kept as sent (trim false); a whole message's items are trimmed and
// joined by blank lines.
func reasoningDetails(raw json.RawMessage, trim bool) string {
	if len(raw) == 0 {
		return ""
	}
	var items []struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return ""
	}
	var parts []string
	for _, it := range items {
		if it.Text == nil || strings.TrimSpace(*it.Text) == "" {
			continue
		}
		t := *it.Text
		if trim {
			t = strings.TrimSpace(t)
		}
		parts = append(parts, t)
	}
	if trim {
		return strings.Join(parts, "\n\n")
	}
	return strings.Join(parts, "")
}

// signature returns a tool call's thought signature, which Gemini
// behind an OpenAI-compatible gateway sends as thought_signature or
// thoughtSignature.
func (f signatureFields) signature() string {
	return cmp.Or(rawString(f.ThoughtSignature), rawString(f.ThoughtSignatureCamel))
}

// errEmptyStream is returned when a stream ends without any choice.
var errEmptyStream error = &model.EmptyStreamError{Detail: "no finish_reason and no content"}

// response returns the assembled response.
func (a *assembler) response() (*model.Response, error) {
	if a.finish == "" && a.text.Len() == 0 && len(a.calls) == 0 && a.reasoning.Len() == 0 {
		return nil, errEmptyStream
	}
	msg := model.Message{
		Role:      model.RoleAssistant,
		Content:   a.text.String(),
		Reasoning: a.reasoning.String(),
	}
	if a.thinkTags {
		msg.Content, msg.Reasoning = splitThinkTags(msg.Content, msg.Reasoning)
	}
	for _, s := range a.calls {
		args := strings.TrimSpace(s.args.String())
		if args == "" {
			args = "{}"
		}
		id := s.id
		if id == "" {
			id = newCallID()
		}
		msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: id, Name: s.name, Arguments: rawArguments(args), Signature: s.signature})
	}
	resp := &model.Response{Message: msg, FinishReason: normaliseFinish(a.finish, len(msg.ToolCalls) > 0)}
	if a.finish != "" {
		resp.Metadata = map[string]any{model.MetaFinishReason: a.finish}
		if a.filter != nil {
			resp.Metadata[model.MetaContentFilterResults] = a.filter
		}
	}
	if a.usage != nil {
		resp.Usage = *a.usage
		u := *a.usage
		resp.Message.Usage = &u
	}
	return resp, nil
}

// normaliseFinish maps a chat-completions finish reason to Antler's. A
// response with tool calls always finishes with FinishToolCalls, since
// several compatible servers say "stop" there.
func normaliseFinish(reason string, hasCalls bool) model.FinishReason {
	if hasCalls {
		return model.FinishToolCalls
	}
	switch reason {
	case "length":
		return model.FinishLength
	case "content_filter":
		return model.FinishSafety
	case "tool_calls", "function_call":
		return model.FinishToolCalls
	default:
		return model.FinishStop
	}
}

// rawArguments returns args as JSON. Arguments that are not valid JSON
// (a model's mistake) are kept as a JSON string, so the message still
// serialises and the tool's validation reports the problem to the model.
func rawArguments(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
