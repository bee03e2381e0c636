package agent

// Runtime context keys read by the task tool and the subagent limit
// middleware (builtin.ContextToolGroups, builtin.ContextAvailableSkills,
// subagent.ContextMaxTotalSubagents).
const (
	contextToolGroups        = "tool_groups"
	contextAvailableSkills   = "available_skills"
	contextMaxTotalSubagents = "max_total_subagents"
)
