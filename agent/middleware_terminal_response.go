package agent

import (
	"context"
	"sync"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// The texts of the terminal-response guard, DeerFlow's: the hidden
// reminder of the one retry, the answer that replaces a second empty
// response, and the reason recorded for the run.
const (
	terminalRecoveryPrompt = "<system_reminder>\n" +
		"Your previous response after the tool execution was empty. Review the tool results " +
		"already present in the conversation and provide a concise, user-visible final response. " +
		"Do not call another tool unless it is strictly necessary.\n" +
		"</system_reminder>"
	terminalFallbackText = "The model completed the tool run but returned no final response, " +
		"including after one automatic retry. Please try again or use a different model."
	terminalFallbackReason = "Model returned an empty terminal response after one retry"
	// terminalRecoveryName marks the reminder message in its Meta
	// (DeerFlow's message name; Antler sends no names of user messages).
	terminalRecoveryName = "terminal_response_recovery"
)

// TerminalResponse is DeerFlow's TerminalResponseMiddleware (lead agent):
// when the model answers a turn that ran tools with no visible text and
// no tool calls, the call is made once more with a hidden reminder to
// answer from the tool results (added to that request only, never
// stored); if the answer is still empty, or a later one in the same run
// is, it is replaced by DeerFlow's explanation marked as an error
// fallback, so that the run ends as error instead of a silent success.
// One retry per run: build one per run (the factory builds the lead's
// chain for each run).
func TerminalResponse() tool.ModelMiddleware {
	g := &terminalGuard{}
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			resp, err := next(ctx, call)
			if err != nil || !emptyTerminal(resp) || !toolResultThisTurn(call.Request.Messages) {
				return resp, err
			}
			if !g.take(call.RunID) {
				return terminalFallback(resp), nil
			}
			call.Log().Warn("empty final answer after tool calls; asking the model once more")
			retry := *call
			retry.Request = call.Request.Clone()
			retry.Request.Messages = append(retry.Request.Messages, model.Message{Role: model.RoleUser,
				Content: terminalRecoveryPrompt, Meta: map[string]any{"hide_from_ui": true, terminalRecoveryName: true}})
			resp, err = next(ctx, &retry)
			if err != nil || !emptyTerminal(resp) {
				return resp, err
			}
			return terminalFallback(resp), nil
		}
	}
}

// terminalGuard holds the one retry of the run it serves.
type terminalGuard struct {
	mu      sync.Mutex
	run     string
	retried bool
}

// take reports whether the run may still retry, and spends the retry.
func (g *terminalGuard) take(runID string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.run != runID {
		g.run, g.retried = runID, false
	}
	if g.retried {
		return false
	}
	g.retried = true
	return true
}

// emptyTerminal reports a response with no visible text and no call
// intent (tool calls, raw provider calls, a tool_calls finish reason).
func emptyTerminal(resp *model.Response) bool {
	if resp == nil || hasVisibleText(resp.Message) || hasCallIntent(resp.Message) || resp.FinishReason == model.FinishToolCalls {
		return false
	}
	if v, ok := metadataString(resp, model.MetaFinishReason); ok && (v == "tool_calls" || v == "function_call") {
		return false
	}
	return true
}

// toolResultThisTurn reports a tool result after the latest user message
// that is not hidden (DeerFlow's scope: interactive turns that ran tools).
func toolResultThisTurn(msgs []model.Message) bool {
	last := -1
	for i, m := range msgs {
		if m.Role != model.RoleUser {
			continue
		}
		if hidden, _ := m.Meta["hide_from_ui"].(bool); hidden {
			continue
		}
		last = i
	}
	if last < 0 {
		return false
	}
	for _, m := range msgs[last+1:] {
		if m.Role == model.RoleTool {
			return true
		}
	}
	return false
}

// terminalFallback is resp with DeerFlow's explanation as its text and
// the error-fallback marker in Meta.
func terminalFallback(resp *model.Response) *model.Response {
	out := *resp
	meta := make(map[string]any, len(resp.Message.Meta)+2)
	for k, v := range resp.Message.Meta {
		meta[k] = v
	}
	meta[MetaErrorFallback], meta[MetaErrorReason] = true, terminalFallbackReason
	out.Message.Content, out.Message.Meta = terminalFallbackText, meta
	return &out
}
