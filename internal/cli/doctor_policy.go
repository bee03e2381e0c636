package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/antlerhq/antler/toolpolicy"
	"github.com/antlerhq/antler/toolset"
)

// checkToolPolicy reports the tool_policy section when the config sets
// one: its rules and default, and a warning for each rule that matches no
// bound tool (MCP tools included), such as a misspelt tool name or a
// server that is not configured or not up.
func (r *doctorReport) checkToolPolicy(ctx context.Context, a *app) {
	tp := a.cfg.ToolPolicy
	if len(tp.Rules) == 0 && (tp.Default == "" || tp.Default == string(toolpolicy.ActionAllow)) {
		return
	}
	start := time.Now()
	p, err := toolpolicy.New(tp)
	if err != nil {
		r.add("tool_policy", a.cfg.Path, "fail", oneLine(err), start)
		return
	}
	r.add("tool_policy", a.cfg.Path, "ok", fmt.Sprintf("%d rules, default %s", p.Rules(), p.Default()), start)
	ts, err := a.assembler.Assemble(ctx, toolset.Options{IncludeMCP: true, SubagentEnabled: true})
	if err != nil {
		return // the tools check reports it
	}
	unmatched := map[string]bool{}
	for _, name := range p.Unmatched(ts.Tools()) {
		unmatched[name] = true
	}
	for i, rule := range tp.Rules {
		name := fmt.Sprintf("tool_policy.rules[%d]", i)
		if unmatched[name] {
			r.add("tool_policy", name, "warn", fmt.Sprintf("%s:%d: the rule matches no bound tool", a.cfg.Path, rule.Line), start)
		}
	}
}
