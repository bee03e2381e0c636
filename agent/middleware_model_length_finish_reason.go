package agent

import (
	"context"
	"maps"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// StopModelLengthCapped is the stop reason of a run whose final answer
// the provider cut at its output limit (DeerFlow's model_length_capped).
const StopModelLengthCapped StopReason = "model_length_capped"

// lengthSignal is one provider's way of saying that a response hit the
// output-token limit: a metadata field and its values (matched ignoring
// case), under DeerFlow's detector name.
type lengthSignal struct {
	detector, field string
	values          []string
}

// lengthSignals are DeerFlow's three default length detectors, in order:
// OpenAI-compatible finish_reason length, Anthropic stop_reason
// max_tokens, Gemini finish_reason MAX_TOKENS.
func lengthSignals() []lengthSignal {
	return []lengthSignal{
		{"openai_compatible_length", model.MetaFinishReason, []string{"length"}},
		{"anthropic_max_tokens", model.MetaStopReason, []string{"max_tokens"}},
		{"gemini_max_tokens", model.MetaFinishReason, []string{"MAX_TOKENS"}},
	}
}

// ModelLengthFinishReason is DeerFlow's ModelLengthFinishReasonMiddleware
// (always on, no section): when the provider reports that a final answer
// (text, no tool calls) stopped at the output limit, the run ends with
// stop reason model_length_capped instead of completed, so that the user
// and API clients can tell a cut answer from a whole one. The answer is
// kept as it is; the reason goes into the message's Meta stop_reason,
// where the loop reads every guard's (unless a guard set one already),
// and an info line is logged. A response with tool calls, or without
// visible text, is left alone, as in DeerFlow.
func ModelLengthFinishReason() tool.ModelMiddleware {
	signals := lengthSignals()
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			resp, err := next(ctx, call)
			if err != nil || resp == nil || hasCallIntent(resp.Message) || !hasVisibleText(resp.Message) {
				return resp, err
			}
			if _, set := resp.Message.Meta["stop_reason"]; set {
				return resp, nil // an earlier cap wins
			}
			for _, s := range signals {
				v, ok := metadataString(resp, s.field)
				if !ok || !containsFold(s.values, v) {
					continue
				}
				call.Log().Info("Provider model length cap detected", "detector", s.detector,
					"reason_field", s.field, "reason_value", v)
				out := *resp
				out.Message.Meta = maps.Clone(resp.Message.Meta)
				if out.Message.Meta == nil {
					out.Message.Meta = map[string]any{}
				}
				out.Message.Meta["stop_reason"] = string(StopModelLengthCapped)
				return &out, nil
			}
			return resp, nil
		}
	}
}

func containsFold(values []string, v string) bool {
	for _, x := range values {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

// hasCallIntent reports tool calls, or raw provider call payloads a model
// passed through in Meta (DeerFlow's additional_kwargs tool_calls and
// function_call).
func hasCallIntent(m model.Message) bool {
	return len(m.ToolCalls) > 0 || m.Meta["tool_calls"] != nil || m.Meta["function_call"] != nil
}
