package guardrails

import (
	"context"
	"fmt"
)

// AllowlistProvider is DeerFlow's built-in provider: tools are allowed or
// denied by name, with no external dependency.
type AllowlistProvider struct {
	allowed map[string]bool // nil: no allowlist
	denied  map[string]bool
}

// NewAllowlistProvider returns the provider. A nil allowed means no
// allowlist (every tool passes it); a non-nil empty one allows no tool at
// all, as DeerFlow's `allowed_tools: []` does. A tool in denied is denied
// even when allowed lists it.
func NewAllowlistProvider(allowed, denied []string) *AllowlistProvider {
	p := &AllowlistProvider{denied: set(denied)}
	if allowed != nil {
		p.allowed = set(allowed)
	}
	return p
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Name implements Provider.
func (p *AllowlistProvider) Name() string { return "allowlist" }

// Evaluate implements Provider, with DeerFlow's reasons and texts.
func (p *AllowlistProvider) Evaluate(_ context.Context, req *Request) (Decision, error) {
	if p.allowed != nil && !p.allowed[req.ToolName] {
		return deny(CodeToolNotAllowed, fmt.Sprintf("tool '%s' not in allowlist", req.ToolName)), nil
	}
	if p.denied[req.ToolName] {
		return deny(CodeToolNotAllowed, fmt.Sprintf("tool '%s' is denied", req.ToolName)), nil
	}
	return Decision{Allow: true, Reasons: []Reason{{Code: CodeAllowed}}}, nil
}

func deny(code, msg string) Decision {
	return Decision{Allow: false, Reasons: []Reason{{Code: code, Message: msg}}}
}

var _ Provider = (*AllowlistProvider)(nil)
