package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSectionRules_coverEveryDeerFlowSection: every DeerFlow section
// Antler does not implement has exactly one rule with a reason, so that a
// section added to deerFlowSections must be classified. (A rule may
// outlive its section's move to implementedSections; it is then unused.)
func TestSectionRules_coverEveryDeerFlowSection(t *testing.T) {
	rules := map[string]int{}
	for _, r := range deerFlowSectionRules() {
		if r.reason == "" {
			t.Errorf("%s: no reason", r.name)
		}
		if sectionKind(r.name) == sectionUnknown {
			t.Errorf("rule for %q, which is no section", r.name)
		}
		rules[r.name]++
	}
	for _, name := range deerFlowSections() {
		if rules[name] != 1 {
			t.Errorf("%s: %d rules, want 1", name, rules[name])
		}
	}
}

// TestIgnoredSections_restrictsAsSet: whether a set section restricts
// depends on what it sets.
func TestIgnoredSections_restrictsAsSet(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      bool
	}{
		{"auth restricts", "auth:\n  local:\n    allow_registration: false\n", true},
		{"null auth sets nothing", "auth:\n", false},
		{"an enabled flag that is not a boolean restricts", "plugins:\n  - name: x\n    use: x:install\n    enabled: maybe\n", true},
		{"max_recursion_limit under Antler's cap restricts", "max_recursion_limit: 20\n", true},
		{"max_recursion_limit over Antler's cap does not", "max_recursion_limit: 1000\n", false},
		{"an enabled plugin restricts", "plugins:\n  - name: x\n    use: x:install\n", true},
		{"disabled plugins do not", "plugins:\n  - name: x\n    use: x:install\n    enabled: false\n", false},
		{"middlewares restrict", "middlewares:\n  - my.mod:Guard\n", true},
		{"run_events does not", "run_events:\n  backend: db\n", false},
		{"channels do not", "channels:\n  slack:\n    enabled: true\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, tc.src, anyEnv)
			if len(c.IgnoredSections) != 1 {
				t.Fatalf("IgnoredSections = %+v", c.IgnoredSections)
			}
			if s := c.IgnoredSections[0]; s.Restricts != tc.want || s.Line != 1 || s.File != "config.yaml" || s.Reason == "" {
				t.Errorf("section = %+v, want Restricts %v on config.yaml:1 with a reason", s, tc.want)
			}
		})
	}
}

// TestUnenforcedError_namesFileLineSectionAndWhy is the refusal: a set
// restrictive section is a *Error with its place and reason.
func TestUnenforcedError_namesFileLineSectionAndWhy(t *testing.T) {
	c := mustParse(t, "models: []\nauth:\n  local: {}\nrun_events:\n  backend: db\n", anyEnv)
	err := c.UnenforcedError()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("UnenforcedError() = %v, want a *Error", err)
	}
	if ce.File != "config.yaml" || ce.Line != 2 || ce.Key != "auth" || !strings.Contains(ce.Msg, "local accounts") ||
		!strings.Contains(ce.Msg, "allow_unenforced") {
		t.Errorf("error = %v", ce)
	}
	if strings.Contains(err.Error(), "run_events") {
		t.Errorf("a section that does not restrict is refused: %v", err)
	}
}

func TestAllowUnenforced(t *testing.T) {
	c := mustParse(t, "middlewares: [my.mod:Guard]\nauth: {local: {}}\nallow_unenforced: [middlewares]\n", anyEnv)
	err := c.UnenforcedError()
	if err == nil || strings.Contains(err.Error(), "middlewares") || !strings.Contains(err.Error(), "auth") {
		t.Errorf("UnenforcedError() = %v, want only auth refused (the opt-out names middlewares alone)", err)
	}
	i := slices.IndexFunc(c.IgnoredSections, func(s IgnoredSection) bool { return s.Name == "middlewares" })
	if i < 0 || !c.IgnoredSections[i].Allowed || c.IgnoredSections[i].Refused() {
		t.Errorf("middlewares = %+v, want allowed", c.IgnoredSections)
	}

	c = mustParse(t, "allow_unenforced: [middlewares]\n", anyEnv)
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "middlewares") {
		t.Errorf("Warnings = %v, want one about an opt-out for a section the file does not set", c.Warnings)
	}

	for _, name := range []string{"title", "guardrails", "everything"} {
		_, err := Parse("config.yaml", []byte("allow_unenforced: ["+name+"]\n"), anyEnv)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != "allow_unenforced[0]" || ce.Line != 1 {
			t.Errorf("allow_unenforced: [%s]: err = %v, want a load error at allow_unenforced[0]", name, err)
		}
	}
}

// TestDeerFlowExample_refusedSections: DeerFlow's own example config starts
// Antler: every section it sets that restricts is enforced (its
// safety_finish_reason, on, is implemented), and those Antler ignores are
// classified.
func TestDeerFlowExample_refusedSections(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "deerflow-config.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse("deerflow-config.example.yaml", data, anyEnv)
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, s := range c.IgnoredSections {
		if s.Refused() {
			refused = append(refused, s.Name)
		}
	}
	if len(refused) != 0 {
		t.Errorf("DeerFlow's example is refused for %v", refused)
	}
	if err := c.UnenforcedError(); err != nil {
		t.Errorf("UnenforcedError() = %v", err)
	}
	if len(c.IgnoredSections) == 0 {
		t.Error("no section of DeerFlow's example is reported as ignored")
	}
	for _, s := range c.IgnoredSections {
		if s.Name == "safety_finish_reason" {
			t.Errorf("safety_finish_reason is ignored: %+v", s)
		}
	}
	if !c.SafetyFinishReason.Enabled {
		t.Error("the example's safety_finish_reason (enabled: true) is not enabled")
	}
}

// TestExtensionsUnenforcedError: the Python hooks of extensions_config.json
// are refused with their line unless allow_unenforced names each key.
func TestExtensionsUnenforcedError(t *testing.T) {
	src := "{\n  \"mcpServers\": {},\n  \"middlewares\": [\"my_company.mw:DomainGuardMiddleware\"],\n  \"mcpInterceptors\": \"my.icpt:Deny\"\n}\n"
	e, err := ParseExtensions("extensions_config.json", []byte(src), anyEnv)
	if err != nil {
		t.Fatal(err)
	}
	e.Path = "extensions_config.json"
	err = e.UnenforcedError(nil)
	var ce *Error
	if !errors.As(err, &ce) || ce.Line != 3 || ce.Key != "middlewares" || !strings.Contains(ce.Msg, "DomainGuardMiddleware") {
		t.Errorf("UnenforcedError(nil) = %v, want middlewares at line 3 first", err)
	}
	if !strings.Contains(err.Error(), "mcpInterceptors") {
		t.Errorf("UnenforcedError(nil) = %v, want mcpInterceptors too", err)
	}
	err = e.UnenforcedError([]string{AllowExtensionMiddlewares})
	if err == nil || strings.Contains(err.Error(), "DomainGuard") {
		t.Errorf("with middlewares allowed: %v, want only mcpInterceptors", err)
	}
	if err := e.UnenforcedError([]string{AllowExtensionMiddlewares, AllowExtensionMCPInterceptors}); err != nil {
		t.Errorf("both allowed: %v", err)
	}
	if c := mustParse(t, "allow_unenforced: [extensions_config.middlewares]\n", anyEnv); len(c.AllowUnenforced) != 1 {
		t.Errorf("AllowUnenforced = %v", c.AllowUnenforced)
	}
}
