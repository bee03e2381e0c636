package config

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The section is on when absent, as in DeerFlow, and is no longer an
// ignored section.
func TestSafetyFinishReason_onByDefault(t *testing.T) {
	for _, src := range []string{"", "safety_finish_reason:\n", "safety_finish_reason:\n  detectors: null\n"} {
		c := mustParse(t, src, anyEnv)
		if diff := cmp.Diff(SafetyFinishReason{Enabled: true}, c.SafetyFinishReason); diff != "" {
			t.Errorf("%q (-want +got):\n%s", src, diff)
		}
		if len(c.IgnoredSections) != 0 || c.UnenforcedError() != nil {
			t.Errorf("%q: ignored %+v, unenforced %v", src, c.IgnoredSections, c.UnenforcedError())
		}
	}
	if !Default().SafetyFinishReason.Enabled {
		t.Error("Default() has safety_finish_reason off")
	}
}

// DeerFlow's override example: a full detector list with settings.
func TestSafetyFinishReason_detectorsOverride(t *testing.T) {
	c := mustParse(t, `safety_finish_reason:
  enabled: true
  detectors:
    - use: deerflow.agents.middlewares.safety_termination_detectors:OpenAICompatibleContentFilterDetector
      config:
        finish_reasons: ["content_filter", "sensitive", "risk_control"]
    - use: deerflow.agents.middlewares.safety_termination_detectors:AnthropicRefusalDetector
    - use: deerflow.agents.middlewares.safety_termination_detectors:GeminiSafetyDetector
      config:
        finish_reasons: []
`, anyEnv)
	want := SafetyFinishReason{Enabled: true, Detectors: []SafetyDetector{
		{Use: SafetyDetectorOpenAI, Config: SafetyDetectorConfig{FinishReasons: []string{"content_filter", "sensitive", "risk_control"}}},
		{Use: SafetyDetectorAnthropic},
		{Use: SafetyDetectorGemini, Config: SafetyDetectorConfig{FinishReasons: []string{}}},
	}}
	if diff := cmp.Diff(want, c.SafetyFinishReason); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// DeerFlow rejects an explicit empty list (it would leave the guard in
// the chain detecting nothing) and detectors it cannot build; Antler does
// at load, naming the key and line.
func TestSafetyFinishReason_badDetectorsNameTheKey(t *testing.T) {
	for _, tc := range []struct{ name, src, key, msg string }{
		{"empty list", "safety_finish_reason:\n  detectors: []\n", "safety_finish_reason.detectors", "use enabled=false"},
		{"a Python class", "safety_finish_reason:\n  detectors:\n    - use: my_company.deerflow_ext:WenxinSafetyDetector\n",
			"safety_finish_reason.detectors[0].use", "cannot load Python classes"},
		{"not a detector", "safety_finish_reason:\n  detectors:\n    - use: builtins:dict\n",
			"safety_finish_reason.detectors[0].use", "not a safety detector"},
		{"no use", "safety_finish_reason:\n  detectors:\n    - config: {}\n", "safety_finish_reason.detectors[0].use", "required"},
		{"a setting the detector does not take", "safety_finish_reason:\n  detectors:\n    - use: " + SafetyDetectorAnthropic +
			"\n      config:\n        finish_reasons: [x]\n", "safety_finish_reason.detectors[0].config", "takes stop_reasons"},
		{"an unknown setting", "safety_finish_reason:\n  detectors:\n    - use: " + SafetyDetectorOpenAI +
			"\n      config:\n        error_codes: [17]\n", "safety_finish_reason.detectors[0].config.error_codes", "unknown key"},
		{"an unknown key", "safety_finish_reason:\n  enable: true\n", "safety_finish_reason.enable", "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tc.src), anyEnv)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tc.key || ce.Line < 2 || !strings.Contains(ce.Msg, tc.msg) {
				t.Errorf("error %v, want one at %s mentioning %q", err, tc.key, tc.msg)
			}
		})
	}
}

// A disabled section is not checked further, as DeerFlow builds no
// detector then.
func TestSafetyFinishReason_disabledIgnoresDetectors(t *testing.T) {
	c := mustParse(t, "safety_finish_reason:\n  enabled: false\n  detectors: []\n", anyEnv)
	if c.SafetyFinishReason.Enabled {
		t.Error("enabled")
	}
}

// TestExampleConfigSafetyFinishReasonSection: the example config.yaml at
// the repository root sets the section, with DeerFlow's defaults.
func TestExampleConfigSafetyFinishReasonSection(t *testing.T) {
	data, err := os.ReadFile("../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\nsafety_finish_reason:\n") {
		t.Fatal("the example config.yaml has no safety_finish_reason section")
	}
	c, err := Load("../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(defaultSafetyFinishReason(), c.SafetyFinishReason); diff != "" {
		t.Errorf("example safety_finish_reason (-DeerFlow's defaults +example):\n%s", diff)
	}
}
