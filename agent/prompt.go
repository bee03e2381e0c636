package agent

import (
	_ "embed"
	"strings"

	"github.com/antlerhq/antler/internal/tmpl"
)

//go:embed prompt.md
var promptText string

var promptTemplate = tmpl.MustParse("lead", promptText)

// PromptData fills the lead agent's system prompt (prompt.md).
type PromptData struct {
	// AgentName is the custom agent's name ("" for the default agent).
	AgentName string
	// Soul is the custom agent's SOUL.md, trimmed.
	Soul string
	// Date is today's date as the prompt states it.
	Date string
	// Bootstrap selects the agent-builder prompt.
	Bootstrap bool
	// PresentFiles and Clarification say whether those tools are bound.
	PresentFiles  bool
	Clarification bool
	// Subagents says whether the task tool is bound, with its limits.
	Subagents              bool
	MaxConcurrentSubagents int
	MaxTotalSubagents      int
	// Skills is the skills section (<skill_system>...), "" for none.
	Skills string
	// Deferred is the <available-deferred-tools> section, "" for none.
	Deferred string
	// Memory is the user's long-term memory block (<memory>...</memory>),
	// "" for none.
	Memory string
	// MemoryTools says whether the memory tools are bound (memory mode
	// "tool").
	MemoryTools bool
}

// RenderPrompt renders the lead agent's system prompt.
func RenderPrompt(d PromptData) string {
	var b strings.Builder
	if err := promptTemplate.Execute(&b, d); err != nil {
		// The template is fixed and its data a plain struct: an error here
		// is a programming mistake caught by the tests.
		panic("agent: render prompt: " + err.Error())
	}
	return strings.TrimSpace(b.String()) + "\n"
}
