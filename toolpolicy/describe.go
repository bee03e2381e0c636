package toolpolicy

import "github.com/antlerhq/antler/tool"

// ForTool returns the action calls of a tool get from the rules that read
// only the tool's labels (name, source, MCP server, annotations) and the
// default, and whether rules by agent or by bash command may decide some
// of its calls otherwise. `antler tools list` shows it.
func (p *Policy) ForTool(name string, meta map[string]string) (action Action, varies bool) {
	var found verdicts
	for i := range p.rules {
		r := &p.rules[i]
		if !r.matchesLabels(name, meta) {
			continue
		}
		if r.command != nil || r.agent != "" {
			varies = true
			continue
		}
		found.add(r, "")
	}
	for _, a := range []Action{ActionDeny, ActionAsk, ActionAllow} {
		if _, ok := found[a]; ok {
			return a, varies
		}
	}
	return p.def, varies
}

// Unmatched returns the rules (as "tool_policy.rules[i]") that match none
// of tools by name, source, MCP server and annotations: a misspelt tool
// name, a server that is not configured or not up. `antler doctor`
// reports them.
func (p *Policy) Unmatched(tools []*tool.Tool) []string {
	var out []string
	for i := range p.rules {
		r := &p.rules[i]
		matched := false
		for _, t := range tools {
			if r.matchesLabels(t.Name, t.Meta) {
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, r.name)
		}
	}
	return out
}
