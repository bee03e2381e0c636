package agent

import (
	"maps"

	"github.com/antlerhq/antler/model"
)

// capped returns a copy of resp that ends the run: no tool calls, content
// as the answer, the stop reason on the message's Meta (a clone, with
// meta's extra keys set) and a tool_calls finish reason turned into stop.
// The loop detection, the token budget and the safety finish reason stop a
// run this way.
func capped(resp *model.Response, content string, reason StopReason, meta map[string]any) *model.Response {
	out := *resp
	out.Message.ToolCalls = nil
	out.Message.Content = content
	m := maps.Clone(resp.Message.Meta)
	if m == nil {
		m = make(map[string]any, len(meta)+1)
	}
	maps.Copy(m, meta)
	m["stop_reason"] = string(reason)
	out.Message.Meta = m
	if out.FinishReason == model.FinishToolCalls {
		out.FinishReason = model.FinishStop
	}
	return &out
}

// withParagraph is content with text appended as its own paragraph (text
// alone when content is empty).
func withParagraph(content, text string) string {
	if content == "" {
		return text
	}
	return content + "\n\n" + text
}
