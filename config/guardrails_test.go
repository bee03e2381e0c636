package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// DeerFlow's TestGuardrailsConfig::test_config_defaults.
func TestGuardrails_defaults(t *testing.T) {
	for _, src := range []string{"", "guardrails: null\n", "guardrails: {}\n"} {
		c := mustParse(t, src, nil)
		if diff := cmp.Diff(Guardrails{FailClosed: true}, c.Guardrails); diff != "" {
			t.Errorf("%q: Guardrails (-want +got):\n%s", src, diff)
		}
		if len(c.Ignored) != 0 {
			t.Errorf("%q: Ignored = %v; guardrails is implemented", src, c.Ignored)
		}
	}
}

// DeerFlow's TestGuardrailsConfig::test_config_from_dict, with the lines
// the provider's errors name.
func TestGuardrails_everyKey(t *testing.T) {
	src := "guardrails:\n" +
		"  enabled: true\n" +
		"  fail_closed: false\n" +
		"  passport: ./guardrails/passport.json\n" +
		"  provider:\n" +
		"    use: deerflow.guardrails.builtin:AllowlistProvider\n" +
		"    config:\n" +
		"      denied_tools: [bash]\n" +
		"      token: $TOKEN\n"
	c := mustParse(t, src, envOf(map[string]string{"TOKEN": "secret"}))
	want := Guardrails{Enabled: true, Passport: "./guardrails/passport.json", Provider: &GuardrailProvider{
		Use:         AllowlistGuardrailUse,
		Config:      map[string]any{"denied_tools": []any{"bash"}, "token": "secret"},
		Line:        5,
		UseLine:     6,
		ConfigLines: map[string]int{"denied_tools": 8, "token": 9},
	}}
	if diff := cmp.Diff(want, c.Guardrails); diff != "" {
		t.Errorf("Guardrails (-want +got):\n%s", diff)
	}
	if got := c.Guardrails.Provider.ConfigLine("allowed_tools"); got != 5 {
		t.Errorf("ConfigLine of an unset key = %d, want the provider's line 5", got)
	}
}

// DeerFlow's test_singleton_load_and_get: DeerFlow keeps one global
// section; each Antler load owns its own.
func TestGuardrails_eachLoadOwnsItsSection(t *testing.T) {
	a := mustParse(t, "guardrails: {enabled: true, provider: {use: test:Foo}}\n", nil)
	b := mustParse(t, "", nil)
	if !a.Guardrails.Enabled || b.Guardrails.Enabled || b.Guardrails.Provider != nil {
		t.Errorf("loads share state: a=%+v b=%+v", a.Guardrails, b.Guardrails)
	}
}

func TestGuardrails_invalid(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"enabled without provider", "guardrails:\n  enabled: true\n",
			"config.yaml:2: guardrails.provider: is required when guardrails.enabled is true"},
		{"provider without use", "guardrails:\n  enabled: true\n  provider:\n    config: {}\n",
			"config.yaml:3: guardrails.provider.use: is required"},
		{"unknown key", "guardrails:\n  enabled: true\n  failclosed: true\n",
			"config.yaml:3: guardrails.failclosed: unknown key"},
		{"missing variable", "guardrails:\n  provider:\n    use: antler:http\n    config:\n      headers: {Authorization: $NOPE}\n",
			"config.yaml:5: guardrails.provider.config.headers.Authorization: environment variable NOPE is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tt.src), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
