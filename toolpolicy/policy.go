package toolpolicy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// Policy is the tool_policy section made ready to decide. It is immutable
// after New and safe for concurrent use.
type Policy struct {
	def   Action
	rules []rule
}

// rule is one compiled entry of tool_policy.rules.
type rule struct {
	name        string // "tool_policy.rules[i]"
	action      Action
	reason      string
	tool        string // glob; "" any
	source      string // "" any
	server      string // glob; "" any
	agent       string // glob; "" any
	annotations map[string]bool
	command     *commandPattern
}

// New compiles a tool_policy section. The loader has already checked a
// section read from config.yaml; New checks again for values built in
// code, with the same texts.
func New(cfg config.ToolPolicy) (*Policy, error) {
	p := &Policy{def: ActionAllow}
	if cfg.Default != "" {
		if !slices.Contains(config.ToolPolicyActions(), cfg.Default) {
			return nil, fmt.Errorf("tool_policy.default: must be allow, ask or deny, got %q", cfg.Default)
		}
		p.def = Action(cfg.Default)
	}
	for i, r := range cfg.Rules {
		c, err := compile(i, r)
		if err != nil {
			return nil, err
		}
		p.rules = append(p.rules, c)
	}
	return p, nil
}

func compile(i int, r config.ToolPolicyRule) (rule, error) {
	name := fmt.Sprintf("tool_policy.rules[%d]", i)
	if !slices.Contains(config.ToolPolicyActions(), r.Action) {
		return rule{}, fmt.Errorf("%s.action: must be allow, ask or deny, got %q", name, r.Action)
	}
	if !r.HasMatcher() {
		return rule{}, fmt.Errorf("%s: needs at least one of tool, source, mcp_server, agent, annotations, command", name)
	}
	if r.Source != "" && !slices.Contains(config.ToolPolicySources(), r.Source) {
		return rule{}, fmt.Errorf("%s.source: must be one of %s, got %q", name, strings.Join(config.ToolPolicySources(), ", "), r.Source)
	}
	for k := range r.Annotations {
		if !slices.Contains(config.ToolPolicyAnnotations(), k) {
			return rule{}, fmt.Errorf("%s.annotations.%s: unknown MCP tool annotation", name, k)
		}
	}
	for _, f := range []struct{ key, v string }{{"tool", r.Tool}, {"mcp_server", r.MCPServer}, {"agent", r.Agent}, {"command", r.Command}} {
		if msg := config.CheckToolPolicyPattern(f.v); msg != "" {
			return rule{}, fmt.Errorf("%s.%s: pattern %q %s", name, f.key, f.v, msg)
		}
	}
	c := rule{name: name, action: Action(r.Action), reason: r.Reason, tool: r.Tool, source: r.Source,
		server: r.MCPServer, agent: r.Agent, annotations: r.Annotations}
	if r.Command != "" {
		if strings.TrimSpace(r.Command) == "" {
			return rule{}, fmt.Errorf("%s.command: must not be blank", name)
		}
		cp := newCommandPattern(r.Command)
		c.command = &cp
		if c.tool == "" {
			c.tool = "bash"
		}
	}
	return c, nil
}

// Rules returns the number of rules.
func (p *Policy) Rules() int { return len(p.rules) }

// Default returns the action of a call no rule matches.
func (p *Policy) Default() Action { return p.def }

// Decide implements Decider. Among every rule that matches the call, a
// deny wins over an ask and an ask over an allow; among rules of the same
// action the first in the file names the decision. With no match the
// default decides.
func (p *Policy) Decide(call *tool.Call, args json.RawMessage) Decision {
	var found verdicts
	var commandRules []*rule
	for i := range p.rules {
		r := &p.rules[i]
		if !r.matchesTool(call) {
			continue
		}
		if r.command != nil {
			commandRules = append(commandRules, r)
			continue
		}
		found.add(r, "")
	}
	if len(commandRules) > 0 {
		decideCommands(&found, commandRules, commandLine(args))
	}
	for _, a := range []Action{ActionDeny, ActionAsk, ActionAllow} {
		if d, ok := found[a]; ok {
			return d
		}
	}
	return Decision{Action: p.def}
}

// verdicts holds the first rule of each action that matched.
type verdicts map[Action]Decision

func (v *verdicts) add(r *rule, command string) {
	if *v == nil {
		*v = verdicts{}
	}
	if _, ok := (*v)[r.action]; !ok {
		(*v)[r.action] = Decision{Action: r.action, Rule: r.name, Reason: r.reason, Command: clip(command)}
	}
}

// maxCommandText bounds Decision.Command (bytes; a longer command is cut
// at a character boundary and ends in "…").
const maxCommandText = 1000

func clip(s string) string {
	if len(s) <= maxCommandText {
		return s
	}
	cut := maxCommandText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// matchesTool reports whether every matcher but command matches.
func (r *rule) matchesTool(call *tool.Call) bool {
	return r.matchesLabels(call.Name, call.Meta) && (r.agent == "" || glob(r.agent, call.AgentName))
}

// matchesLabels reports whether the matchers on the tool itself (name,
// source, MCP server, annotations) match.
func (r *rule) matchesLabels(name string, meta map[string]string) bool {
	switch {
	case r.tool != "" && !glob(r.tool, name):
		return false
	case r.source != "" && sourceOf(meta) != r.source:
		return false
	case r.server != "" && !glob(r.server, meta[tool.MetaMCPServer]):
		return false
	}
	for k, want := range r.annotations {
		got, ok := annotation(meta, k)
		if !ok || got != want {
			return false
		}
	}
	return true
}

// sourceOf is the tool's source label; an MCP tool without one (a tool
// promoted by tool_search from the catalogue) is still an MCP tool.
func sourceOf(meta map[string]string) string {
	if s := meta[tool.MetaSource]; s != "" {
		return s
	}
	if meta[tool.MetaMCPServer] != "" {
		return "mcp"
	}
	return ""
}

// annotation returns an MCP tool's annotation as the MCP specification
// reads it: the value the server states, else the default (destructive
// and open-world true, read-only and idempotent false), and a read-only
// tool is neither destructive nor repeated-effect. A tool that is not an
// MCP tool has no annotations.
func annotation(meta map[string]string, key string) (bool, bool) {
	if sourceOf(meta) != "mcp" {
		return false, false
	}
	stated := func(k string, def bool) bool {
		switch meta[tool.MetaMCPAnnotationPrefix+k] {
		case "true":
			return true
		case "false":
			return false
		}
		return def
	}
	readOnly := stated("readOnlyHint", false)
	switch key {
	case "readOnlyHint":
		return readOnly, true
	case "destructiveHint":
		return !readOnly && stated(key, true), true
	case "idempotentHint":
		return readOnly || stated(key, false), true
	case "openWorldHint":
		return stated(key, true), true
	}
	return false, false
}
