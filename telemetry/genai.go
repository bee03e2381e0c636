package telemetry

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/antlerhq/antler/model"
)

// maxContentBytes caps each content attribute (messages, tool arguments,
// tool results) recorded with CaptureContent; longer text is cut at a
// rune boundary and marked.
const maxContentBytes = 16 << 10

// Run names a run for its invoke_agent span.
type Run struct {
	// Agent is gen_ai.agent.name; "" is the lead agent ("lead_agent").
	Agent    string
	ThreadID string
	RunID    string
}

// StartRun begins the invoke_agent span of a run; the run's model and
// tool spans are its children. The active-runs gauge counts it until
// EndRun.
func (r *Recorder) StartRun(ctx context.Context, run Run) (context.Context, *Span) {
	if r == nil {
		return ctx, nil
	}
	name := run.Agent
	if name == "" {
		name = "lead_agent"
	}
	ctx, s := r.start(ctx, OpInvokeAgent+" "+name, trace.SpanKindInternal,
		keyOperation.String(OpInvokeAgent), keyAgentName.String(name),
		keyConversationID.String(run.ThreadID), keyRunID.String(run.RunID))
	s.attrs = []attribute.KeyValue{keyAgentName.String(name)}
	if r.m != nil {
		r.m.activeRuns.Add(ctx, 1, r.m.set(s.attrs))
	}
	return ctx, s
}

// EndRun ends a run's span with its outcome (the stop reason), the
// number of model calls and the token usage.
func (s *Span) EndRun(outcome string, turns int, usage model.Usage, err error) {
	if s == nil {
		return
	}
	if m := s.r.m; m != nil {
		m.activeRuns.Add(s.ctx, -1, m.set(s.attrs))
		m.runs.Add(s.ctx, 1, m.set(append(s.attrs, keyRunOutcome.String(outcome))))
	}
	if s.span == nil {
		return
	}
	s.span.SetAttributes(keyRunOutcome.String(outcome), keyTurns.Int(turns),
		keyInputTokens.Int64(usage.InputTokens), keyOutputTokens.Int64(usage.OutputTokens))
	setError(s.span, err)
	s.span.End()
}

// StartModel begins the chat span of one model call to the models[]
// entry called name.
func (r *Recorder) StartModel(ctx context.Context, name string, req *model.Request) (context.Context, *Span) {
	if r == nil {
		return ctx, nil
	}
	provider, id := "", ""
	if r.o.DescribeModel != nil {
		provider, id = r.o.DescribeModel(name)
	}
	if id == "" {
		id = name
	}
	attrs := []attribute.KeyValue{keyOperation.String(OpChat), keyRequestModel.String(id)}
	if provider != "" {
		attrs = append(attrs, keyProvider.String(provider))
	}
	ctx, s := r.start(ctx, OpChat+" "+id, trace.SpanKindClient, attrs...)
	s.attrs = attrs
	if s.span != nil {
		if name != "" && name != id {
			s.span.SetAttributes(keyModelConfigName.String(name))
		}
		if req != nil {
			if req.MaxTokens > 0 {
				s.span.SetAttributes(keyMaxTokens.Int(req.MaxTokens))
			}
			if req.Temperature != nil {
				s.span.SetAttributes(keyTemperature.Float64(*req.Temperature))
			}
			if r.o.CaptureContent {
				s.span.SetAttributes(keyInputMessages.String(messagesJSON(req.Messages)))
			}
		}
	}
	return ctx, s
}

// FirstToken marks the first streamed token of a model call: an event
// on its span and antler.time_to_first_token (seconds) when it ends.
// Later calls do nothing.
func (s *Span) FirstToken() {
	if s == nil || !s.first.IsZero() {
		return
	}
	s.first = time.Now()
	if s.span != nil {
		s.span.AddEvent("gen_ai.first_token")
	}
}

// EndModel ends a model call's span with the response (nil after err).
func (s *Span) EndModel(resp *model.Response, err error) {
	if s == nil {
		return
	}
	if m := s.r.m; m != nil {
		attrs := s.attrs
		if err != nil {
			attrs = append(attrs[:len(attrs):len(attrs)], keyErrorType.String(errorType(err)))
		}
		m.opDuration.Record(s.ctx, time.Since(s.start).Seconds(), m.set(attrs))
		m.modelCalls.Add(s.ctx, 1, m.set(attrs))
		if resp != nil {
			m.tokens.Record(s.ctx, resp.Usage.InputTokens, m.set(append(s.attrs[:len(s.attrs):len(s.attrs)], keyTokenType.String("input"))))
			m.tokens.Record(s.ctx, resp.Usage.OutputTokens, m.set(append(s.attrs[:len(s.attrs):len(s.attrs)], keyTokenType.String("output"))))
		}
	}
	if s.span == nil {
		return
	}
	if !s.first.IsZero() {
		s.span.SetAttributes(keyTTFT.Float64(s.first.Sub(s.start).Seconds()))
	}
	if resp != nil {
		for _, kv := range s.attrs {
			if kv.Key == keyRequestModel {
				s.span.SetAttributes(keyResponseModel.String(kv.Value.AsString()))
			}
		}
		s.span.SetAttributes(keyInputTokens.Int64(resp.Usage.InputTokens), keyOutputTokens.Int64(resp.Usage.OutputTokens))
		if resp.FinishReason != "" {
			s.span.SetAttributes(keyFinishReasons.StringSlice([]string{string(resp.FinishReason)}))
		}
		if s.r.o.CaptureContent {
			s.span.SetAttributes(keyOutputMessages.String(messagesJSON([]model.Message{resp.Message})))
		}
	}
	setError(s.span, err)
	s.span.End()
}

// Tool describes one tool call for its execute_tool span.
type Tool struct {
	Name, CallID string
	// Meta is the bound tool's Meta (tool.MetaSource "source",
	// "mcp_server").
	Meta map[string]string
	// Arguments are recorded only with CaptureContent.
	Arguments []byte
}

// StartTool begins the execute_tool span of a tool call.
func (r *Recorder) StartTool(ctx context.Context, t Tool) (context.Context, *Span) {
	if r == nil {
		return ctx, nil
	}
	source := t.Meta["source"]
	typ := "function"
	if source == "mcp" || source == "acp" {
		typ = "extension"
	}
	attrs := []attribute.KeyValue{keyToolName.String(t.Name), keyToolSource.String(source)}
	ctx, s := r.start(ctx, OpExecuteTool+" "+t.Name, trace.SpanKindInternal,
		keyOperation.String(OpExecuteTool), keyToolName.String(t.Name), keyToolCallID.String(t.CallID),
		keyToolType.String(typ), keyToolSource.String(source))
	s.attrs = attrs
	if s.span != nil {
		if server := t.Meta["mcp_server"]; server != "" {
			s.span.SetAttributes(keyMCPServer.String(server))
		}
		if r.o.CaptureContent && len(t.Arguments) > 0 {
			s.span.SetAttributes(keyToolArguments.String(clip(string(t.Arguments))))
		}
	}
	return ctx, s
}

// ToolResult is the end of a tool call.
type ToolResult struct {
	// IsError is the result's error flag (outcome "error", else "ok").
	IsError bool
	// Decision is the guardrail or approval decision on the call, ""
	// when none was made ("denied", "approval_requested", ...).
	Decision string
	// Text is the result the model reads, recorded only with
	// CaptureContent.
	Text string
}

// EndTool ends a tool call's span; err is the call's Go error
// (cancellation), not an error result.
func (s *Span) EndTool(res ToolResult, err error) {
	if s == nil {
		return
	}
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "cancelled"
	case res.IsError:
		outcome = "error"
	}
	if m := s.r.m; m != nil {
		attrs := m.set(append(s.attrs, keyToolOutcome.String(outcome)))
		m.toolCalls.Add(s.ctx, 1, attrs)
		m.toolDuration.Record(s.ctx, time.Since(s.start).Seconds(), attrs)
	}
	if s.span == nil {
		return
	}
	s.span.SetAttributes(keyToolOutcome.String(outcome))
	if res.Decision != "" {
		s.span.SetAttributes(keyToolDecision.String(res.Decision))
	}
	if s.r.o.CaptureContent && res.Text != "" {
		s.span.SetAttributes(keyToolResult.String(clip(res.Text)))
	}
	setError(s.span, err)
	s.span.End()
}

// chatMessage is a message as gen_ai.input.messages records it: a role
// and its parts.
type chatMessage struct {
	Role  string     `json:"role"`
	Parts []chatPart `json:"parts"`
}

type chatPart struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// messagesJSON renders msgs in the conventions' message structure,
// clipped to maxContentBytes.
func messagesJSON(msgs []model.Message) string {
	out := make([]chatMessage, 0, len(msgs))
	for _, m := range msgs {
		cm := chatMessage{Role: string(m.Role)}
		if m.Content != "" {
			typ := "text"
			if m.Role == model.RoleTool {
				typ = "tool_call_response"
			}
			cm.Parts = append(cm.Parts, chatPart{Type: typ, Content: m.Content, ID: m.ToolCallID})
		}
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if !json.Valid(args) {
				args = nil
			}
			cm.Parts = append(cm.Parts, chatPart{Type: "tool_call", ID: tc.ID, Name: tc.Name, Arguments: args})
		}
		out = append(out, cm)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return ""
	}
	return clip(string(b))
}

// clip cuts s to maxContentBytes at a rune boundary, marking the cut.
func clip(s string) string {
	if len(s) <= maxContentBytes {
		return s
	}
	n := maxContentBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…[truncated]"
}
