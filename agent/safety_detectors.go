package agent

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
)

// SafetyTermination is a provider's safety stop that a SafetyDetector
// found in a response (DeerFlow's SafetyTermination).
type SafetyTermination struct {
	// Detector names the detector that found it.
	Detector string
	// ReasonField is the metadata key that carried the signal
	// (model.MetaFinishReason or model.MetaStopReason), ReasonValue its
	// value as the provider sent it.
	ReasonField, ReasonValue string
	// Extras holds provider details worth keeping (Azure's
	// content_filter_results, Gemini's safety_ratings); nil when none.
	Extras map[string]any
}

// SafetyDetector recognises one provider's way of saying it stopped a
// response for safety (DeerFlow's SafetyTerminationDetector). Detect runs
// on every response the guard inspects: it must not modify resp and must
// tolerate missing or oddly typed metadata.
type SafetyDetector interface {
	Name() string
	Detect(resp *model.Response) (SafetyTermination, bool)
}

// The names of the built-in detectors, as DeerFlow's.
const (
	safetyDetectorOpenAIName    = "openai_compatible_content_filter"
	safetyDetectorAnthropicName = "anthropic_refusal"
	safetyDetectorGeminiName    = "gemini_safety"
)

// geminiSafetyReasons are the Gemini finish reasons that mean a safety,
// blocklist, recitation or personal-data filter stopped the response.
// STOP, MAX_TOKENS, LANGUAGE, NO_IMAGE, OTHER, IMAGE_OTHER,
// MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL and
// FINISH_REASON_UNSPECIFIED are left out on purpose, as in DeerFlow: they
// are normal ends, capability mismatches, protocol errors or too broad.
func geminiSafetyReasons() []string {
	return []string{"SAFETY", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "RECITATION",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION"}
}

// reasonDetector matches one metadata field against a set of values,
// ignoring case, and copies one provider detail into the extras.
type reasonDetector struct {
	name, field string
	values      []string // lower-cased
	extrasKey   string   // "" for none
}

func newReasonDetector(name, field string, values []string, extrasKey string) *reasonDetector {
	d := &reasonDetector{name: name, field: field, extrasKey: extrasKey}
	for _, v := range values {
		d.values = append(d.values, strings.ToLower(v))
	}
	return d
}

func (d *reasonDetector) Name() string { return d.name }

func (d *reasonDetector) Detect(resp *model.Response) (SafetyTermination, bool) {
	v, ok := metadataString(resp, d.field)
	if !ok || !slices.Contains(d.values, strings.ToLower(v)) {
		return SafetyTermination{}, false
	}
	t := SafetyTermination{Detector: d.name, ReasonField: d.field, ReasonValue: v}
	if d.extrasKey != "" {
		if x, ok := resp.Metadata[d.extrasKey]; ok && x != nil {
			t.Extras = map[string]any{d.extrasKey: x}
		}
	}
	return t, true
}

// metadataString reads a non-empty string field from the response's
// provider metadata, then from the message's Meta (where a model that
// passes provider fields through may leave it), as DeerFlow reads
// response_metadata, then additional_kwargs. Values of other types are
// ignored.
func metadataString(resp *model.Response, field string) (string, bool) {
	for _, m := range []map[string]any{resp.Metadata, resp.Message.Meta} {
		if s, ok := m[field].(string); ok && s != "" {
			return s, true
		}
	}
	return "", false
}

// OpenAIContentFilterDetector matches the chat-completions finish_reason
// content_filter (OpenAI, Azure, Moonshot, DeepSeek, Mistral, vLLM, Qwen
// and other compatible servers), or the given finish reasons instead when
// finishReasons is not nil (a gateway's own tokens such as "sensitive").
// It keeps Azure's content_filter_results.
func OpenAIContentFilterDetector(finishReasons []string) SafetyDetector {
	if finishReasons == nil {
		finishReasons = []string{"content_filter"}
	}
	return newReasonDetector(safetyDetectorOpenAIName, model.MetaFinishReason, finishReasons, model.MetaContentFilterResults)
}

// AnthropicRefusalDetector matches Anthropic's stop_reason refusal, or the
// given stop reasons instead when stopReasons is not nil.
func AnthropicRefusalDetector(stopReasons []string) SafetyDetector {
	if stopReasons == nil {
		stopReasons = []string{"refusal"}
	}
	return newReasonDetector(safetyDetectorAnthropicName, model.MetaStopReason, stopReasons, "")
}

// GeminiSafetyDetector matches Gemini's safety finish reasons (SAFETY,
// BLOCKLIST, PROHIBITED_CONTENT, SPII, RECITATION and their IMAGE_ forms),
// or the given finish reasons instead when finishReasons is not nil. It
// keeps the safety_ratings a model passes through.
func GeminiSafetyDetector(finishReasons []string) SafetyDetector {
	if finishReasons == nil {
		finishReasons = geminiSafetyReasons()
	}
	return newReasonDetector(safetyDetectorGeminiName, model.MetaFinishReason, finishReasons, "safety_ratings")
}

// DefaultSafetyDetectors returns a new list of DeerFlow's built-in
// detectors: OpenAI-compatible content_filter, Anthropic refusal, Gemini
// safety.
func DefaultSafetyDetectors() []SafetyDetector {
	return []SafetyDetector{OpenAIContentFilterDetector(nil), AnthropicRefusalDetector(nil), GeminiSafetyDetector(nil)}
}

// SafetyDetectorsFromConfig returns the detectors of the section: the
// built-in set when it lists none, else those it lists, in order. An empty
// list or an unknown use string is an error (config.Load reports both
// with their line; this guards a Config built in code).
func SafetyDetectorsFromConfig(c config.SafetyFinishReason) ([]SafetyDetector, error) {
	if c.Detectors == nil {
		return DefaultSafetyDetectors(), nil
	}
	if len(c.Detectors) == 0 {
		return nil, fmt.Errorf("safety_finish_reason.detectors must be omitted (use built-ins) or contain at least one entry; " +
			"use enabled=false to disable the middleware entirely")
	}
	out := make([]SafetyDetector, 0, len(c.Detectors))
	for i, d := range c.Detectors {
		switch d.Use {
		case config.SafetyDetectorOpenAI:
			out = append(out, OpenAIContentFilterDetector(d.Config.FinishReasons))
		case config.SafetyDetectorAnthropic:
			out = append(out, AnthropicRefusalDetector(d.Config.StopReasons))
		case config.SafetyDetectorGemini:
			out = append(out, GeminiSafetyDetector(d.Config.FinishReasons))
		default:
			return nil, fmt.Errorf("safety_finish_reason.detectors[%d].use: %q is not a safety detector Antler has (known: %s)",
				i, d.Use, strings.Join(config.KnownSafetyDetectors(), ", "))
		}
	}
	return out, nil
}

// cloneExtras copies a termination's extras for a record.
func cloneExtras(x map[string]any) map[string]any {
	if x == nil {
		return map[string]any{}
	}
	return maps.Clone(x)
}
