package config

import (
	"slices"
	"strings"
)

// Guardrails is the guardrails section: DeerFlow's pre-tool-call
// authorization. When Enabled, every tool call of the lead agent, of
// subagents and of `antler tools call` is evaluated by the provider before
// it runs (package guardrails); a denied call never runs and the model
// reads why.
type Guardrails struct {
	// Enabled turns the guardrail on (default false). Enabled without a
	// provider is a load error (DeerFlow ignores it).
	Enabled bool `yaml:"enabled"`
	// FailClosed blocks a call when the provider fails (an error, a crash,
	// a timeout, an unreadable decision); false lets the call through with
	// a warning. Default true.
	FailClosed bool `yaml:"fail_closed"`
	// Passport is an OAP passport reference (a file path or a hosted agent
	// id), passed to the provider as the request's agent_id; null (the
	// default) sends an empty agent_id.
	Passport string `yaml:"passport"`
	// Provider names the provider (default null).
	Provider *GuardrailProvider `yaml:"provider"`
}

// GuardrailProvider is guardrails.provider.
type GuardrailProvider struct {
	// Use names the provider: deerflow.guardrails.builtin:AllowlistProvider
	// (built in), antler:command, antler:http, or a use string an embedding
	// program registers. Required.
	Use string `yaml:"use"`
	// Config holds the provider's settings (DeerFlow's constructor
	// keyword arguments), "$VAR" values resolved.
	Config map[string]any `yaml:"config"`
	// Line is the line of the provider key, UseLine that of its use key,
	// and ConfigLines the line of each key under config, for errors.
	Line        int            `yaml:"-"`
	UseLine     int            `yaml:"-"`
	ConfigLines map[string]int `yaml:"-"`
}

// ConfigLine returns the line of config key key, or of the provider when
// the key is not set.
func (g *GuardrailProvider) ConfigLine(key string) int {
	if l, ok := g.ConfigLines[key]; ok {
		return l
	}
	return g.Line
}

func defaultGuardrails() Guardrails { return Guardrails{FailClosed: true} }

// validateGuardrails records the provider's lines and rejects an enabled
// guardrail without a provider and a provider without a use string.
func (p *parser) validateGuardrails() {
	g := &p.cfg.Guardrails
	if g.Provider == nil {
		if g.Enabled {
			p.errorf(p.line("guardrails.enabled"), "guardrails.provider", "is required when guardrails.enabled is true "+
				"(for example use: deerflow.guardrails.builtin:AllowlistProvider)")
		}
		return
	}
	pr := g.Provider
	pr.Line = p.line("guardrails.provider")
	pr.UseLine = p.line("guardrails.provider.use")
	for k, l := range p.keyLine {
		if rest, ok := strings.CutPrefix(k, "guardrails.provider.config."); ok && !strings.ContainsAny(rest, ".[") {
			if pr.ConfigLines == nil {
				pr.ConfigLines = map[string]int{}
			}
			pr.ConfigLines[rest] = l
		}
	}
	if strings.TrimSpace(pr.Use) == "" {
		p.invalid("guardrails.provider.use", "is required (known: %s)", strings.Join(knownGuardrailUses(), ", "))
	}
}

// AllowlistGuardrailUse is the use string of DeerFlow's built-in
// allowlist provider.
const AllowlistGuardrailUse = "deerflow.guardrails.builtin:AllowlistProvider"

// knownGuardrailUses lists the guardrail providers Antler itself
// implements, sorted (an embedding program may register more).
func knownGuardrailUses() []string {
	out := []string{AllowlistGuardrailUse, "antler:command", "antler:http"}
	slices.Sort(out)
	return out
}
