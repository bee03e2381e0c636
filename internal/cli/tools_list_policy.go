package cli

import (
	"github.com/antlerhq/antler/toolpolicy"
	"github.com/antlerhq/antler/toolset"
)

// listPolicy is the tool policy `tools list` shows, nil when the config
// sets none (no rules and the allow default), so that the listing of a
// config without a policy is unchanged.
func listPolicy(a *app) *toolpolicy.Policy {
	tp := a.cfg.ToolPolicy
	if len(tp.Rules) == 0 && (tp.Default == "" || tp.Default == string(toolpolicy.ActionAllow)) {
		return nil
	}
	p, err := toolpolicy.New(tp)
	if err != nil {
		return nil // the loader refused it already; nothing to show
	}
	return p
}

// policyOf is what the policy decides for calls of e by the tool's labels
// ("allow", "ask" or "deny"), and whether command or agent rules may
// decide some calls otherwise; "" without a policy.
func policyOf(p *toolpolicy.Policy, e toolset.Entry) (string, bool) {
	if p == nil {
		return "", false
	}
	a, varies := p.ForTool(e.Tool.Name, e.Tool.Meta)
	return string(a), varies
}

// policyCell is the POLICY column of the table.
func policyCell(p *toolpolicy.Policy, e toolset.Entry) string {
	a, varies := policyOf(p, e)
	if varies {
		return a + " (varies)"
	}
	return a
}
