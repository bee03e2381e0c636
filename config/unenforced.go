package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file is the rule that nothing which restricts is ignored in
// silence. Every DeerFlow section Antler does not implement is classified
// here: whether, as the file sets it, it restricts what runs or who may
// run it, and why. A set restrictive section makes `serve`, `run` and
// `chat` refuse to start unless allow_unenforced names it. See
// docs/differences.md, "Sections Antler does not implement".

// IgnoredSection is a top-level section of config.yaml that Antler
// accepts without implementing it.
type IgnoredSection struct {
	Name string
	File string // the file as given to Load or Parse
	Line int
	// Restricts says that the section, as set, restricts what runs or who
	// may run it, which Antler cannot enforce.
	Restricts bool
	// Reason says what the section does in DeerFlow, and for a section
	// that does not restrict why ignoring it opens nothing.
	Reason string
	// Allowed is set when allow_unenforced names the section: the
	// operator accepts that it is not enforced.
	Allowed bool
}

// Refused reports whether the section stops serve, run and chat.
func (s IgnoredSection) Refused() bool { return s.Restricts && !s.Allowed }

// sectionRule classifies one DeerFlow section: restricts reports whether
// the section as set (its node) restricts; nil means it never does.
type sectionRule struct {
	name      string
	restricts func(v *yaml.Node) bool
	reason    string
}

// deerFlowSectionRules is the table of DeerFlow's sections that Antler
// does not implement, one rule each, read from DeerFlow's config models.
// TestSectionRules_coverEveryDeerFlowSection checks that it names exactly
// deerFlowSections().
func deerFlowSectionRules() []sectionRule {
	always := func(*yaml.Node) bool { return true }
	return []sectionRule{
		{"agent_storage", nil, "where custom agents are stored; Antler stores them under its home"},
		{"auth", always, "DeerFlow's local accounts and OIDC sign-in decide who may use the gateway (registration, email domains, verified email); Antler authenticates only gateway.tokens"},
		{"channel_connections", nil, "IM channel connections; Antler runs no IM channel, so nothing reaches the agent through one"},
		{"channels", nil, "IM channels (Slack, Feishu, ...); Antler runs none, so nothing reaches the agent through one"},
		{"checkpointer", nil, "the LangGraph checkpointer backend; Antler checkpoints in its own store (database)"},
		{"dedupe_storage", nil, "where IM webhook deliveries are de-duplicated; Antler runs no IM channel"},
		{"extensions", always, "config.yaml's copy of the extensions: its middlewares are Python code DeerFlow runs around every call (a guard such as a domain filter); Antler reads MCP servers and skills from extensions_config.json only"},
		{"log_level", nil, "DeerFlow's log level; use --log-level"},
		{"logging", nil, "DeerFlow's log format and trace ids"},
		{"max_recursion_limit", recursionBelowTurnCap, "a ceiling on the steps of a run; Antler stops a run after 50 model calls (about 100 LangGraph steps), so only a lower ceiling goes unenforced"},
		{"middlewares", nonEmpty, "Python middlewares DeerFlow runs around every call, which may be guards; Antler cannot load Python classes"},
		{"plugins", anyPluginEnabled, "extension packages that add middlewares, hooks and routes, which may be guards; Antler cannot load Python packages"},
		{"run_events", nil, "where run events are stored; Antler stores them in its own store"},
		{"run_ownership", nil, "leases of runs between DeerFlow workers; Antler's replicas lease runs in their own store"},
		{"stream_bridge", nil, "how live events reach other workers; Antler streams from its own store"},
	}
}

// enabledIs returns a rule that restricts when the section's enabled key
// equals want, with def when the key is absent.
func enabledIs(want, def bool) func(*yaml.Node) bool {
	return func(v *yaml.Node) bool {
		enabled := def
		if n := mapValue(v, "enabled"); n != nil && !isNull(n) {
			b, err := strconv.ParseBool(n.Value)
			if err != nil {
				return true // a value that is not a boolean: assume the worst
			}
			enabled = b
		}
		return enabled == want
	}
}

// nonEmpty restricts when the section holds anything.
func nonEmpty(v *yaml.Node) bool {
	return len(v.Content) > 0 || (v.Kind == yaml.ScalarNode && v.Value != "")
}

// anyPluginEnabled restricts when a plugins entry is enabled (DeerFlow's
// default) or is not a mapping.
func anyPluginEnabled(v *yaml.Node) bool {
	if v.Kind != yaml.SequenceNode {
		return true
	}
	return slices.ContainsFunc(v.Content, enabledIs(true, true))
}

// recursionBelowTurnCap restricts when max_recursion_limit is under 100,
// the steps of Antler's 50 model calls; a value that is not an integer is
// assumed to restrict.
func recursionBelowTurnCap(v *yaml.Node) bool {
	n, err := strconv.Atoi(v.Value)
	return err != nil || n < 100
}

// mapValue returns the value of key in mapping v, or nil.
func mapValue(v *yaml.Node, key string) *yaml.Node {
	if v == nil || v.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		if v.Content[i].Value == key {
			return v.Content[i+1]
		}
	}
	return nil
}

// ignoredSection classifies a DeerFlow section that Antler does not decode.
func ignoredSection(file, name string, line int, v *yaml.Node) IgnoredSection {
	s := IgnoredSection{Name: name, File: file, Line: line}
	for _, r := range deerFlowSectionRules() {
		if r.name == name {
			s.Reason = r.reason
			s.Restricts = r.restricts != nil && !isNull(v) && r.restricts(v)
		}
	}
	return s
}

// restrictiveSections lists the sections allow_unenforced may name (a
// rule left for a section Antler has since implemented is skipped).
func restrictiveSections() []string {
	var out []string
	for _, r := range deerFlowSectionRules() {
		if r.restricts != nil && sectionKind(r.name) == sectionDeerFlow {
			out = append(out, r.name)
		}
	}
	return out
}

// The extensions_config.json keys that hold DeerFlow Python hooks, as
// allow_unenforced names them.
const (
	AllowExtensionMiddlewares     = "extensions_config.middlewares"
	AllowExtensionMCPInterceptors = "extensions_config.mcpInterceptors"
)

// allowableNames lists what allow_unenforced may name: the restrictive
// sections and the hook keys of extensions_config.json.
func allowableNames() []string {
	return append(restrictiveSections(), AllowExtensionMiddlewares, AllowExtensionMCPInterceptors)
}

// validateAllowUnenforced checks allow_unenforced and marks the sections
// it names as allowed.
func (p *parser) validateAllowUnenforced() {
	for i, name := range p.cfg.AllowUnenforced {
		at := indexKey("allow_unenforced", i)
		if !slices.Contains(allowableNames(), name) {
			p.invalid(at, "%q is not a section Antler refuses; it may name: %s", name, strings.Join(allowableNames(), ", "))
			continue
		}
		if strings.HasPrefix(name, "extensions_config.") {
			continue // checked against the extensions file when it loads
		}
		j := slices.IndexFunc(p.cfg.IgnoredSections, func(s IgnoredSection) bool { return s.Name == name })
		if j < 0 || !p.cfg.IgnoredSections[j].Restricts {
			p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s: names %q, which this file does not set so that it restricts", at, name))
			continue
		}
		p.cfg.IgnoredSections[j].Allowed = true
	}
}

// UnenforcedError returns, for each set restrictive section that
// allow_unenforced does not name, an *Error with its file, line and why
// (joined), or nil when there is none.
func (c *Config) UnenforcedError() error {
	var errs []error
	for _, s := range c.IgnoredSections {
		if s.Refused() {
			errs = append(errs, &Error{File: s.File, Line: s.Line, Key: s.Name, Msg: fmt.Sprintf(
				"DeerFlow's %s section restricts what runs or who may run it, and Antler does not enforce it (%s); "+
					"remove it, or add %q to allow_unenforced to start without it", s.Name, s.Reason, s.Name)})
		}
	}
	return errors.Join(errs...)
}

// UnenforcedError returns, for the middlewares and mcpInterceptors of
// the extensions file that allow names neither, an *Error each (joined):
// DeerFlow runs them around every call and they may be guards, and Antler
// cannot run Python hooks. Nil when there is none.
func (e *Extensions) UnenforcedError(allow []string) error {
	if e == nil {
		return nil
	}
	var errs []error
	for _, h := range []struct {
		key, allowName string
		list           []string
	}{
		{"middlewares", AllowExtensionMiddlewares, e.Middlewares},
		{"mcpInterceptors", AllowExtensionMCPInterceptors, e.MCPInterceptors},
	} {
		if len(h.list) == 0 || slices.Contains(allow, h.allowName) {
			continue
		}
		errs = append(errs, &Error{File: e.Path, Line: e.HookLines[h.key], Key: h.key, Msg: fmt.Sprintf(
			"DeerFlow runs these Python hooks (%s) around every call and they may restrict what runs; Antler cannot load them; "+
				"remove them, or add %q to allow_unenforced in config.yaml to start without them", strings.Join(h.list, ", "), h.allowName)})
	}
	return errors.Join(errs...)
}
