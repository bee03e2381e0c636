package agent

// Runtime context keys read by the task tool and the subagent limit
// middleware (builtin.ContextToolGroups, builtin.ContextAvailableSkills,
// subagent.ContextMaxTotalSubagents).
const (
	contextToolGroups        = "tool_groups"
	contextAvailableSkills   = "available_skills"
	contextMaxTotalSubagents = "max_total_subagents"
)

// StampSubagentContext copies into l.Context the run metadata that the
// task tool passes on to subagents (tool_groups, available_skills) and the
// run's requested per-run task limit (max_total_subagents), unless the
// context already holds them. Call it after Build and before Input when
// the run has subagents enabled. It is idempotent.
func (l *Lead) StampSubagentContext() {
	if l.Context == nil {
		l.Context = map[string]any{}
	}
	for _, k := range []string{contextToolGroups, contextAvailableSkills} {
		if _, ok := l.Context[k]; !ok {
			l.Context[k] = l.Metadata[k]
		}
	}
	if _, ok := l.Context[contextMaxTotalSubagents]; !ok && l.req.MaxTotalSubagents != 0 {
		l.Context[contextMaxTotalSubagents] = l.req.MaxTotalSubagents
	}
}
