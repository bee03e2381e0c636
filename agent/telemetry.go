package agent

import (
	"context"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/tool"
)

// collectTraced is model.Collect of a middleware's model call (the title,
// a summary): an internal span called purpose with the call's chat span
// under it. With a nil tel it is model.Collect.
func collectTraced(ctx context.Context, tel *telemetry.Recorder, purpose string, m model.ChatModel, req *model.Request) (*model.Response, error) {
	if tel == nil {
		return model.Collect(ctx, m, req, nil)
	}
	ctx, op := tel.Start(ctx, purpose)
	ctx, span := tel.StartModel(ctx, ModelName(m), req)
	resp, err := model.Collect(ctx, m, req, func(model.Event) { span.FirstToken() })
	span.EndModel(resp, err)
	op.End(err)
	return resp, err
}

// endToolSpan ends a tool call's execute_tool span with its outcome and
// the guardrail or approval decision the result shows.
func endToolSpan(span *telemetry.Span, res *tool.Result, err error) {
	if span == nil {
		return
	}
	var tr telemetry.ToolResult
	if res != nil {
		tr.IsError = res.IsError
		tr.Decision = toolDecision(res)
		tr.Text = res.TextContent()
	}
	span.EndTool(tr, err)
}

// toolDecision names the decision a result records: "denied" for a
// guardrail's denial, "approval_requested" for an approval card, ""
// otherwise.
func toolDecision(res *tool.Result) string {
	switch {
	case isApprovalRequest(res.Artifact):
		return "approval_requested"
	case res.IsError && strings.HasPrefix(res.TextContent(), "Guardrail denied:"):
		return "denied"
	}
	return ""
}

// spanAgentName is gen_ai.agent.name of a run: the subagent type of a
// task's run, else the custom agent's name ("" for the lead agent).
func spanAgentName(in Input) string {
	if t, ok := in.Context["subagent_type"].(string); ok && t != "" {
		return t
	}
	return in.AgentName
}
