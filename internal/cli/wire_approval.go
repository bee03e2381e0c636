package cli

import (
	"encoding/json"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolpolicy"
)

// approval is the approval middleware of the lead and of subagents over
// the tool_policy section (docs/differences.md, "Approval before
// dangerous tools").
func (a *app) approval() tool.Middleware {
	return agent.Approval(agent.ApprovalOptions{Decider: appDecider{a}, Logger: a.logger})
}

// appDecider is the app's tool policy as its runs apply it: no policy
// allows every call, and with `run --approve-all` a call the policy asks
// about runs (deny still refuses). It reads the app at each call, since
// the subagents' chains are built before a command sets approveAll.
type appDecider struct{ a *app }

// Decide implements toolpolicy.Decider.
func (d appDecider) Decide(call *tool.Call, args json.RawMessage) toolpolicy.Decision {
	if d.a.toolPolicy == nil {
		return toolpolicy.Decision{}
	}
	dec := d.a.toolPolicy.Decide(call, args)
	if dec.Action == toolpolicy.ActionAsk && d.a.approveAll {
		d.a.logger.Info("tool call the policy asks about runs: --approve-all approves asks by policy", "tool", call.Name, "rule", dec.Rule)
		dec.Action = toolpolicy.ActionAllow
	}
	return dec
}

// wireToolPolicy compiles the tool_policy section. A section that
// decides nothing (no rules, default allow) leaves toolPolicy nil.
func (a *app) wireToolPolicy() error {
	p, err := toolpolicy.New(a.cfg.ToolPolicy)
	if err != nil {
		return usageErrorf("%s: %v", a.paths.Config, err)
	}
	if p.Rules() > 0 || p.Default() != toolpolicy.ActionAllow {
		a.toolPolicy = p
	}
	return nil
}
