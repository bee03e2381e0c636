package config

import (
	"fmt"
	"slices"
	"strings"
)

// SafetyFinishReason is DeerFlow's safety_finish_reason section: when a
// model provider stops a response with a safety signal (OpenAI's
// finish_reason content_filter, Anthropic's stop_reason refusal, Gemini's
// SAFETY and kin) the response's tool calls are dropped, since their
// arguments may be cut off, and an explanation is added to the answer
// (agent.SafetyFinishReason). On by default, as in DeerFlow; the lead
// agent and subagents both have it.
type SafetyFinishReason struct {
	// Enabled turns the guard on (default true).
	Enabled bool `yaml:"enabled"`
	// Detectors replaces the built-in detector set (the OpenAI-compatible
	// content_filter, Anthropic refusal and Gemini safety detectors, in
	// that order); null (the default) keeps it. While enabled, an empty
	// list is a load error: use enabled: false instead.
	Detectors []SafetyDetector `yaml:"detectors"`
}

// SafetyDetector is one entry of safety_finish_reason.detectors.
type SafetyDetector struct {
	// Use names a built-in detector by DeerFlow's class path,
	// deerflow.agents.middlewares.safety_termination_detectors: followed by
	// OpenAICompatibleContentFilterDetector, AnthropicRefusalDetector or
	// GeminiSafetyDetector. Required; Antler cannot load other (Python)
	// detectors.
	Use string `yaml:"use"`
	// Config holds the detector's settings (DeerFlow's constructor keyword
	// arguments).
	Config SafetyDetectorConfig `yaml:"config"`
}

// SafetyDetectorConfig is safety_finish_reason.detectors[].config.
type SafetyDetectorConfig struct {
	// FinishReasons replaces the finish_reason values the OpenAI-compatible
	// detector (default content_filter) or the Gemini detector (default
	// SAFETY, BLOCKLIST, PROHIBITED_CONTENT, SPII, RECITATION,
	// IMAGE_SAFETY, IMAGE_PROHIBITED_CONTENT, IMAGE_RECITATION) matches,
	// case-insensitively; null keeps the default, [] matches nothing.
	FinishReasons []string `yaml:"finish_reasons"`
	// StopReasons replaces the stop_reason values the Anthropic detector
	// matches (default refusal), case-insensitively; null keeps the
	// default, [] matches nothing.
	StopReasons []string `yaml:"stop_reasons"`
}

// The use strings of the built-in safety detectors (DeerFlow's class
// paths).
const (
	SafetyDetectorOpenAI    = "deerflow.agents.middlewares.safety_termination_detectors:OpenAICompatibleContentFilterDetector"
	SafetyDetectorAnthropic = "deerflow.agents.middlewares.safety_termination_detectors:AnthropicRefusalDetector"
	SafetyDetectorGemini    = "deerflow.agents.middlewares.safety_termination_detectors:GeminiSafetyDetector"
)

// KnownSafetyDetectors lists the use strings of the built-in detectors.
func KnownSafetyDetectors() []string {
	return []string{SafetyDetectorOpenAI, SafetyDetectorAnthropic, SafetyDetectorGemini}
}

func defaultSafetyFinishReason() SafetyFinishReason { return SafetyFinishReason{Enabled: true} }

// validateSafetyFinishReason checks the detector list of an enabled
// section: not empty, built-in use strings only, and each setting one its
// detector takes (DeerFlow raises at agent construction; this is at load,
// with the line).
func (p *parser) validateSafetyFinishReason() {
	s := p.cfg.SafetyFinishReason
	if !s.Enabled || s.Detectors == nil {
		return
	}
	if len(s.Detectors) == 0 {
		p.invalid("safety_finish_reason.detectors", "must be omitted (use built-ins) or contain at least one entry; "+
			"use enabled=false to disable the middleware entirely")
		return
	}
	for i, d := range s.Detectors {
		at := indexKey("safety_finish_reason.detectors", i)
		if err := d.check(); err != nil {
			key := joinKey(at, "config")
			if !slices.Contains(KnownSafetyDetectors(), d.Use) {
				key = joinKey(at, "use")
			}
			p.invalid(key, "%v", err)
		}
	}
}

// check reports a use string Antler does not have or a setting the
// detector does not take.
func (d SafetyDetector) check() error {
	switch d.Use {
	case SafetyDetectorOpenAI, SafetyDetectorGemini:
		if d.Config.StopReasons != nil {
			return fmt.Errorf("%s takes finish_reasons, not stop_reasons", shortClass(d.Use))
		}
	case SafetyDetectorAnthropic:
		if d.Config.FinishReasons != nil {
			return fmt.Errorf("%s takes stop_reasons, not finish_reasons", shortClass(d.Use))
		}
	case "":
		return fmt.Errorf("use is required (known: %s)", strings.Join(KnownSafetyDetectors(), ", "))
	default:
		return fmt.Errorf("%q is not a safety detector Antler has; it cannot load Python classes (known: %s)",
			d.Use, strings.Join(KnownSafetyDetectors(), ", "))
	}
	return nil
}

// shortClass is the class name of a use string.
func shortClass(use string) string {
	_, name, _ := strings.Cut(use, ":")
	return name
}
