package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/antlerhq/antler/model"
)

// assembler builds a response from Messages API stream events. Content
// blocks are addressed by the index the server sends; tool_use blocks
// are numbered 0, 1, ... in order of appearance for ToolCallDelta.
type assembler struct {
	text      strings.Builder
	reasoning strings.Builder
	signature string
	calls     []*toolBlock
	blocks    map[int64]*toolBlock // content block index -> tool block
	// server are the server tool blocks (the provider's tool search), in
	// order; serverUse maps a server_tool_use block's index to its input.
	server    []serverBlock
	serverUse map[int64]*serverInput
	stop      sdk.StopReason
	usage     model.Usage
	started   bool
}

// serverInput gathers the input of a server_tool_use block.
type serverInput struct {
	at      int // position in assembler.server
	initial string
	args    strings.Builder
}

type toolBlock struct {
	slot     int
	id, name string
	initial  string // input from content_block_start, if any
	args     strings.Builder
}

func (a *assembler) add(ev sdk.MessageStreamEventUnion) []model.Event {
	switch ev.Type {
	case "message_start":
		a.started = true
		u := ev.Message.Usage
		a.usage.InputTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
		a.usage.OutputTokens = u.OutputTokens
	case "content_block_start":
		cb := ev.ContentBlock
		switch cb.Type {
		case "server_tool_use", "tool_search_tool_result":
			a.addServerBlock(ev.Index, cb)
		case "tool_use":
			tb := &toolBlock{slot: len(a.calls), id: cb.ID, name: cb.Name}
			if raw := cb.JSON.Input.Raw(); raw != "" && raw != "{}" && raw != "null" {
				tb.initial = raw
			}
			a.calls = append(a.calls, tb)
			if a.blocks == nil {
				a.blocks = map[int64]*toolBlock{}
			}
			a.blocks[ev.Index] = tb
			return []model.Event{{ToolCallDelta: &model.ToolCallDelta{Index: tb.slot, ID: tb.id, Name: tb.name}}}
		case "text":
			if cb.Text != "" {
				a.text.WriteString(cb.Text)
				return []model.Event{{TextDelta: cb.Text}}
			}
		case "thinking":
			if cb.Thinking != "" {
				a.reasoning.WriteString(cb.Thinking)
				return []model.Event{{ReasoningDelta: cb.Thinking}}
			}
		}
	case "content_block_delta":
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			a.text.WriteString(d.Text)
			return []model.Event{{TextDelta: d.Text}}
		case "thinking_delta":
			a.reasoning.WriteString(d.Thinking)
			return []model.Event{{ReasoningDelta: d.Thinking}}
		case "signature_delta":
			a.signature += d.Signature
		case "input_json_delta":
			if si := a.serverUse[ev.Index]; si != nil {
				si.args.WriteString(d.PartialJSON)
				return nil
			}
			if tb := a.blocks[ev.Index]; tb != nil && d.PartialJSON != "" {
				tb.args.WriteString(d.PartialJSON)
				return []model.Event{{ToolCallDelta: &model.ToolCallDelta{Index: tb.slot, Arguments: d.PartialJSON}}}
			}
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.stop = ev.Delta.StopReason
		}
		if ev.Usage.OutputTokens > 0 {
			a.usage.OutputTokens = ev.Usage.OutputTokens
		}
		if in := ev.Usage.InputTokens + ev.Usage.CacheCreationInputTokens + ev.Usage.CacheReadInputTokens; in > a.usage.InputTokens {
			a.usage.InputTokens = in
		}
	}
	return nil
}

var errEmptyStream error = &model.EmptyStreamError{Detail: "no message_start or stop_reason"}

func (a *assembler) response() (*model.Response, error) {
	if !a.started || a.stop == "" && a.text.Len() == 0 && len(a.calls) == 0 && len(a.server) == 0 {
		return nil, errEmptyStream
	}
	msg := model.Message{Role: model.RoleAssistant, Content: a.text.String(), Reasoning: a.reasoning.String()}
	if a.signature != "" {
		msg.Meta = map[string]any{signatureKey: a.signature}
	}
	a.keepServerBlocks(&msg)
	for _, tb := range a.calls {
		args := strings.TrimSpace(tb.args.String())
		if args == "" {
			args = tb.initial
		}
		if args == "" {
			args = "{}"
		}
		raw := json.RawMessage(args)
		if !json.Valid(raw) {
			raw, _ = json.Marshal(args)
		}
		msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: tb.id, Name: tb.name, Arguments: raw})
	}
	u := a.usage
	u.TotalTokens = u.InputTokens + u.OutputTokens
	mu := u
	msg.Usage = &mu
	resp := &model.Response{Message: msg, Usage: u, FinishReason: finish(a.stop, len(msg.ToolCalls) > 0)}
	if a.stop != "" {
		resp.Metadata = map[string]any{model.MetaStopReason: string(a.stop)}
	}
	return resp, nil
}

func finish(stop sdk.StopReason, hasCalls bool) model.FinishReason {
	if hasCalls {
		return model.FinishToolCalls
	}
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return model.FinishLength
	case "refusal":
		return model.FinishSafety
	case "tool_use":
		return model.FinishToolCalls
	default:
		return model.FinishStop
	}
}

// addServerBlock records a server block of the provider's tool search. A
// server_tool_use is not a call for the agent to run: the API ran it.
func (a *assembler) addServerBlock(index int64, cb sdk.ContentBlockStartEventContentBlockUnion) {
	b := serverBlock{Type: cb.Type}
	if cb.Type == "server_tool_use" {
		b.ID, b.Name = cb.ID, cb.Name
		si := &serverInput{at: len(a.server)}
		if raw := cb.JSON.Input.Raw(); raw != "" && raw != "{}" && raw != "null" {
			si.initial = raw
		}
		if a.serverUse == nil {
			a.serverUse = map[int64]*serverInput{}
		}
		a.serverUse[index] = si
	} else {
		b.ToolUseID = cb.ToolUseID
		b.ErrorCode = cb.Content.ErrorCode
		for _, r := range cb.Content.ToolReferences {
			b.ToolReferences = append(b.ToolReferences, r.ToolName)
		}
	}
	a.server = append(a.server, b)
}

// keepServerBlocks puts the server blocks, with their inputs, on msg's
// Meta, and the names the searches returned under
// model.MetaToolReferences.
func (a *assembler) keepServerBlocks(msg *model.Message) {
	if len(a.server) == 0 {
		return
	}
	for _, si := range a.serverUse {
		input := strings.TrimSpace(si.args.String())
		if input == "" {
			input = si.initial
		}
		if input != "" && json.Valid([]byte(input)) {
			a.server[si.at].Input = json.RawMessage(input)
		}
	}
	var refs []string
	for _, b := range a.server {
		refs = append(refs, b.ToolReferences...)
	}
	if msg.Meta == nil {
		msg.Meta = map[string]any{}
	}
	msg.Meta[serverBlocksKey] = a.server
	if len(refs) > 0 {
		msg.Meta[model.MetaToolReferences] = refs
	}
}
