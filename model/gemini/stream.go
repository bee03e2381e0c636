package gemini

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/antlerhq/antler/model"
)

// assembler builds a response from streamed chunks. Gemini sends each
// function call whole, in one part, so every call part is a new call.
type assembler struct {
	text, reasoning strings.Builder
	calls           []model.ToolCall
	finish          string
	block           string // the prompt's block reason, when it was refused
	usage           *model.Usage
}

func (a *assembler) add(r *generateResponse) []model.Event {
	var evs []model.Event
	if u := r.UsageMetadata; u != nil {
		a.usage = &model.Usage{
			InputTokens:  u.PromptTokenCount,
			OutputTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount,
			TotalTokens:  u.TotalTokenCount,
		}
	}
	if pf := r.PromptFeedback; pf != nil && pf.BlockReason != "" {
		a.block = pf.BlockReason
	}
	if len(r.Candidates) == 0 {
		return nil
	}
	c := r.Candidates[0] // Antler never asks for more than one
	if c.FinishReason != "" {
		a.finish = c.FinishReason
	}
	if c.Content == nil {
		return nil
	}
	for _, p := range c.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			evs = append(evs, a.addCall(p))
		case p.Thought && p.Text != "":
			a.reasoning.WriteString(p.Text)
			evs = append(evs, model.Event{ReasoningDelta: p.Text})
		case p.Text != "":
			a.text.WriteString(p.Text)
			evs = append(evs, model.Event{TextDelta: p.Text})
		}
	}
	return evs
}

func (a *assembler) addCall(p *part) model.Event {
	fc := p.FunctionCall
	args := []byte("{}")
	if len(fc.Args) > 0 {
		args, _ = json.Marshal(fc.Args)
	}
	tc := model.ToolCall{ID: fc.ID, Name: fc.Name, Arguments: args}
	if tc.ID == "" {
		tc.ID = newCallID()
	}
	if len(p.ThoughtSignature) > 0 {
		tc.Signature = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
	}
	a.calls = append(a.calls, tc)
	return model.Event{ToolCallDelta: &model.ToolCallDelta{Index: len(a.calls) - 1, ID: tc.ID, Name: tc.Name, Arguments: string(args)}}
}

// errEmptyStream is returned when a stream ends without any candidate.
var errEmptyStream error = &model.EmptyStreamError{Detail: "no finish reason and no content"}

func (a *assembler) response() (*model.Response, error) {
	finish := a.finish
	if finish == "" && a.block != "" {
		finish = a.block
	}
	if finish == "" && a.text.Len() == 0 && len(a.calls) == 0 && a.reasoning.Len() == 0 {
		return nil, errEmptyStream
	}
	msg := model.Message{Role: model.RoleAssistant, Content: a.text.String(), Reasoning: a.reasoning.String(), ToolCalls: a.calls}
	resp := &model.Response{Message: msg, FinishReason: normaliseFinish(a.finish, a.block, len(a.calls) > 0)}
	if finish != "" {
		resp.Metadata = map[string]any{model.MetaFinishReason: finish}
	}
	if a.usage != nil {
		resp.Usage = *a.usage
		u := *a.usage
		resp.Message.Usage = &u
	}
	return resp, nil
}

// normaliseFinish maps Gemini's finish reasons to Antler's: MAX_TOKENS
// is length, the safety family (SAFETY, RECITATION, BLOCKLIST,
// PROHIBITED_CONTENT, SPII, IMAGE_SAFETY) and a blocked prompt are
// content_filter, a response with calls is tool_calls, the rest stop.
func normaliseFinish(reason, block string, hasCalls bool) model.FinishReason {
	switch {
	case hasCalls:
		return model.FinishToolCalls
	case reason == "MAX_TOKENS":
		return model.FinishLength
	case reason == "SAFETY", reason == "RECITATION", reason == "BLOCKLIST", reason == "PROHIBITED_CONTENT",
		reason == "SPII", reason == "IMAGE_SAFETY", reason == "" && block != "":
		return model.FinishSafety
	default:
		return model.FinishStop
	}
}

func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
