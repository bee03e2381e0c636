package subagent

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
)

// The built-in subagent type names.
const (
	GeneralPurpose = "general-purpose"
	Bash           = "bash"
)

// inheritModel is the model value that runs a subagent with its parent's
// model.
const inheritModel = "inherit"

// bashDisabledMessage is DeerFlow's failure text for the bash subagent
// when host bash is not allowed.
const bashDisabledMessage = "Bash subagent is disabled for LocalSandboxProvider because host bash execution is not a secure sandbox boundary. Switch to AioSandboxProvider for isolated bash access, or set sandbox.allow_host_bash: true only in a fully trusted local environment."

// defaultDisallowed are the tools no subagent gets: no recursion, no
// questions to a user who is not there, no artifact presentation.
var defaultDisallowed = []string{builtin.TaskName, builtin.AskClarificationName, builtin.PresentFilesName}

//go:embed general_purpose.md
var generalPurposePrompt string

//go:embed bash.md
var bashPrompt string

// Type is a resolved subagent type: a built-in or a custom agent, with its
// per-agent overrides applied.
type Type struct {
	Name         string
	Description  string
	SystemPrompt string
	// Tools is the allowlist applied to the assembled tools (nil: all).
	Tools []string
	// DisallowedTools are removed after the allowlist.
	DisallowedTools []string
	// Skills is the type's skill allowlist (nil: all enabled; empty:
	// none).
	Skills []string
	// Model is a models[] name or "inherit" (the parent's model).
	Model string
	// MaxTurns caps the subagent's model calls.
	MaxTurns int
	// Timeout bounds one execution.
	Timeout time.Duration
	// TokenBudget caps the tokens one execution may use.
	TokenBudget config.TokenBudget
	// BuiltIn is true for general-purpose and bash.
	BuiltIn bool
}

// builtinTypes returns the built-in types before overrides.
func builtinTypes() map[string]Type {
	return map[string]Type{
		GeneralPurpose: {
			Name:            GeneralPurpose,
			Description:     "A capable agent for bounded, multi-step tasks that need both exploration and action.",
			SystemPrompt:    strings.TrimSpace(generalPurposePrompt),
			DisallowedTools: slices.Clone(defaultDisallowed),
			Model:           inheritModel,
			MaxTurns:        150,
			BuiltIn:         true,
		},
		Bash: {
			Name:            Bash,
			Description:     "A command-execution specialist for bounded shell workflows.",
			SystemPrompt:    strings.TrimSpace(bashPrompt),
			Tools:           []string{"bash", "ls", "read_file", "write_file", "str_replace"},
			DisallowedTools: slices.Clone(defaultDisallowed),
			Model:           inheritModel,
			MaxTurns:        60,
			BuiltIn:         true,
		},
	}
}

// availableTypes returns the names a task may use: general-purpose, bash
// (only when host bash is allowed), then the custom types in name order.
func availableTypes(cfg *config.Config) []string {
	names := []string{GeneralPurpose}
	if cfg.IsHostBashAllowed() {
		names = append(names, Bash)
	}
	for _, n := range cfg.Subagents.CustomAgentNames() {
		if n != GeneralPurpose && n != Bash {
			names = append(names, n)
		}
	}
	return names
}

// ResolveType returns the named type with its overrides applied
// (DeerFlow's subagents/builtins): built-ins first, then custom agents; then
// subagents.agents.<name> overrides timeout, max_turns, model, skills and
// token_budget. The global timeout_seconds and max_turns apply to
// built-ins only; custom agents keep their own unless overridden.
//
// An unknown name fails with "Unknown subagent type 'x'. Available: a, b";
// bash fails with DeerFlow's bashDisabledMessage when host bash is off.
func ResolveType(cfg *config.Config, name string) (Type, error) {
	s := &cfg.Subagents
	t, ok := builtinTypes()[name]
	switch {
	case ok && name == Bash && !cfg.IsHostBashAllowed():
		return Type{}, fmt.Errorf("%s", bashDisabledMessage)
	case ok:
		t.Timeout = seconds(s.TimeoutSeconds)
		if s.MaxTurns > 0 {
			t.MaxTurns = s.MaxTurns
		}
	default:
		c, found := s.CustomAgents[name]
		if !found {
			avail := strings.Join(availableTypes(cfg), ", ")
			if avail == "" {
				avail = "none"
			}
			return Type{}, fmt.Errorf("Unknown subagent type '%s'. Available: %s", name, avail) //lint:ignore ST1005 DeerFlow's message, shown to the model verbatim
		}
		t = Type{
			Name: name, Description: c.Description, SystemPrompt: c.SystemPrompt,
			Tools: slices.Clone(c.Tools), DisallowedTools: slices.Clone(c.DisallowedTools),
			Skills: slices.Clone(c.Skills), Model: c.Model, MaxTurns: c.MaxTurns,
			Timeout: seconds(c.TimeoutSeconds),
		}
	}
	t.TokenBudget = s.TokenBudget
	if o, found := s.Agents[name]; found {
		if o.TimeoutSeconds != nil {
			t.Timeout = seconds(*o.TimeoutSeconds)
		}
		if o.MaxTurns != nil {
			t.MaxTurns = *o.MaxTurns
		}
		if o.Model != nil {
			t.Model = *o.Model
		}
		if o.Skills != nil {
			t.Skills = slices.Clone(o.Skills)
		}
		if o.TokenBudget != nil {
			t.TokenBudget = applyBudget(t.TokenBudget, *o.TokenBudget)
		}
	}
	if t.Model == "" {
		t.Model = inheritModel
	}
	if t.Timeout <= 0 {
		t.Timeout = 30 * time.Minute
	}
	if t.MaxTurns <= 0 {
		t.MaxTurns = 50
	}
	return t, nil
}

// ModelName returns the model t runs with: its own, else parent, else
// the first configured model.
func (t Type) ModelName(cfg *config.Config, parent string) string {
	if t.Model != "" && t.Model != inheritModel {
		return t.Model
	}
	if parent != "" {
		return parent
	}
	if m, ok := cfg.DefaultModel(); ok {
		return m.Name
	}
	return ""
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

func applyBudget(b config.TokenBudget, o config.TokenBudgetOverride) config.TokenBudget {
	if o.Enabled != nil {
		b.Enabled = *o.Enabled
	}
	if o.MaxTokens != nil {
		b.MaxTokens = *o.MaxTokens
	}
	if o.MaxInputTokens != nil {
		b.MaxInputTokens = *o.MaxInputTokens
	}
	if o.MaxOutputTokens != nil {
		b.MaxOutputTokens = *o.MaxOutputTokens
	}
	if o.WarnThreshold != nil {
		b.WarnThreshold = *o.WarnThreshold
	}
	if o.HardStopThreshold != nil {
		b.HardStopThreshold = *o.HardStopThreshold
	}
	return b
}
