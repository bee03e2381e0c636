package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/tool"
)

// ToolMiddleware refuses, before it runs, a call of a tool the caller's
// role may not use (DeerFlow's execution-time authorization, its
// GuardrailMiddleware over the authorization adapter): the principal is
// built from the call's runtime context, the request is tool:call on the
// tool's name with the call's thread, run, tool call id, input and
// subagent flag, and a deny is an error result with DeerFlow's text; the
// tool never runs. A provider failure denies when fail_closed. The
// deferred tool_search is let through: its catalogue was built from the
// already filtered list. Off, it returns nil (no middleware).
func (a *Authorizer) ToolMiddleware() tool.Middleware {
	if !a.Enabled() {
		return nil
	}
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			if call.Name == deferred.ToolSearchName && call.Meta[deferred.MetaCatalog] == "true" {
				return next(ctx, call, args)
			}
			p, err := a.Principal(call.Context)
			var d Decision
			if err != nil {
				a.logger.Error("Authorization: cannot build the principal", "tool", call.Name, "err", err)
				d = a.failDecision()
			} else {
				req := toolRequest(p, call, args)
				d = a.Authorize(ctx, req)
				if server := call.Meta[tool.MetaMCPServer]; d.Allow && server != "" {
					req.Resource, req.Target = ResourceMCPServer, server
					d = a.Authorize(ctx, req)
				}
			}
			if !d.Allow {
				code, reason := "oap.denied", "blocked by guardrail policy"
				if len(d.Reasons) > 0 {
					code, reason = d.Reasons[0].Code, d.Reasons[0].Message
				}
				call.Log().Warn("Guardrail denied", "tool", call.Name, "policy", d.PolicyID, "code", code)
				res := tool.Text(deniedMessage(call.Name, code, reason))
				res.IsError = true
				return res, nil
			}
			return next(ctx, call, args)
		}
	}
}

// failDecision is the decision when the identity cannot be resolved.
func (a *Authorizer) failDecision() Decision {
	if a.failClosed {
		return Decision{Reasons: []Reason{{Code: "oap.evaluator_error", Message: "guardrail provider error (fail-closed)"}}}
	}
	return Decision{Allow: true}
}

// deniedMessage is DeerFlow's tool message for a denied call.
func deniedMessage(toolName, code, reason string) string {
	return fmt.Sprintf("Guardrail denied: tool '%s' was blocked (%s). Reason: %s. Choose an alternative approach.", toolName, code, reason)
}

// toolRequest is the tool:call request of a call.
func toolRequest(p Principal, call *tool.Call, args json.RawMessage) Request {
	var input any
	if json.Unmarshal(args, &input) != nil {
		input = string(args)
	}
	isSub, _ := call.Context["is_subagent"].(bool)
	return Request{Principal: p, Resource: ResourceTool, Action: ActionCall, Target: call.Name, Context: map[string]any{
		"thread_id": call.ThreadID, "run_id": call.RunID, "tool_call_id": call.ID, "tool_input": input,
		"is_subagent": isSub, "agent_id": nil, "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
	}}
}

// VisibleTools returns the names of the tools the run of runtime context
// rc may bind (Layer 1): Visible over tool names with the principal of
// rc. An unresolvable principal is the provider failure of fail_closed.
func (a *Authorizer) VisibleTools(ctx context.Context, rc map[string]any, names []string) []string {
	return a.visibleTo(ctx, rc, ResourceTool, names)
}

// VisibleMCPServers returns the MCP servers, of names, whose tools the run
// of runtime context rc may bind (mcp_servers policies), as VisibleTools.
func (a *Authorizer) VisibleMCPServers(ctx context.Context, rc map[string]any, names []string) []string {
	return a.visibleTo(ctx, rc, ResourceMCPServer, names)
}

// visibleTo is Visible of resourceType with the principal of rc.
func (a *Authorizer) visibleTo(ctx context.Context, rc map[string]any, resourceType string, names []string) []string {
	if !a.Enabled() {
		return append([]string(nil), names...)
	}
	p, err := a.Principal(rc)
	if err != nil {
		a.logger.Error("Authorization: cannot build the principal", "err", err)
		if a.failClosed {
			return []string{}
		}
		return append([]string(nil), names...)
	}
	return a.Visible(ctx, p, resourceType, names)
}
