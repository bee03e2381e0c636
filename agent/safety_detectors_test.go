package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
)

// withMeta is a response with provider metadata and message Meta.
func withMeta(metadata, meta map[string]any) *model.Response {
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Meta: meta}, Metadata: metadata}
}

func finishReason(v any) *model.Response { return withMeta(map[string]any{"finish_reason": v}, nil) }
func stopReason(v any) *model.Response   { return withMeta(map[string]any{"stop_reason": v}, nil) }

func TestOpenAIContentFilterDetector(t *testing.T) {
	d := OpenAIContentFilterDetector(nil)
	t.Run("default matches content_filter", func(t *testing.T) {
		got, ok := d.Detect(finishReason("content_filter"))
		want := SafetyTermination{Detector: "openai_compatible_content_filter", ReasonField: "finish_reason", ReasonValue: "content_filter"}
		if diff := cmp.Diff(want, got); !ok || diff != "" {
			t.Errorf("ok %v (-want +got):\n%s", ok, diff)
		}
	})
	t.Run("case-insensitive match", func(t *testing.T) {
		if got, ok := d.Detect(finishReason("CONTENT_FILTER")); !ok || got.ReasonValue != "CONTENT_FILTER" {
			t.Errorf("got %+v, %v", got, ok)
		}
	})
	t.Run("other finish reasons pass through", func(t *testing.T) {
		for _, r := range []string{"stop", "tool_calls", "length"} {
			if _, ok := d.Detect(finishReason(r)); ok {
				t.Errorf("%s matched", r)
			}
		}
	})
	t.Run("missing metadata passes through", func(t *testing.T) {
		if _, ok := d.Detect(&model.Response{}); ok {
			t.Error("matched")
		}
	})
	t.Run("non-string finish reason passes through", func(t *testing.T) {
		for _, v := range []any{42, map[string]any{"value": "content_filter"}, nil, ""} {
			if _, ok := d.Detect(finishReason(v)); ok {
				t.Errorf("%v matched", v)
			}
		}
	})
	t.Run("falls back to the message's Meta", func(t *testing.T) {
		if _, ok := d.Detect(withMeta(nil, map[string]any{"finish_reason": "content_filter"})); !ok {
			t.Error("no match")
		}
	})
	t.Run("configurable values", func(t *testing.T) {
		d := OpenAIContentFilterDetector([]string{"content_filter", "sensitive", "violation"})
		for _, r := range []string{"sensitive", "violation", "content_filter"} {
			if _, ok := d.Detect(finishReason(r)); !ok {
				t.Errorf("%s did not match", r)
			}
		}
	})
	t.Run("an empty list matches nothing", func(t *testing.T) {
		if _, ok := OpenAIContentFilterDetector([]string{}).Detect(finishReason("content_filter")); ok {
			t.Error("matched")
		}
	})
	t.Run("carries Azure's content_filter_results", func(t *testing.T) {
		results := map[string]any{"hate": map[string]any{"filtered": true, "severity": "high"}}
		got, ok := d.Detect(withMeta(map[string]any{"finish_reason": "content_filter", "content_filter_results": results}, nil))
		if diff := cmp.Diff(map[string]any{"content_filter_results": results}, got.Extras); !ok || diff != "" {
			t.Errorf("ok %v, extras (-want +got):\n%s", ok, diff)
		}
	})
}

func TestAnthropicRefusalDetector(t *testing.T) {
	d := AnthropicRefusalDetector(nil)
	t.Run("default matches refusal", func(t *testing.T) {
		got, ok := d.Detect(stopReason("refusal"))
		if !ok || got.ReasonField != "stop_reason" || got.ReasonValue != "refusal" || got.Detector != "anthropic_refusal" {
			t.Errorf("got %+v, %v", got, ok)
		}
	})
	t.Run("other stop reasons pass through", func(t *testing.T) {
		for _, r := range []string{"end_turn", "tool_use", "max_tokens"} {
			if _, ok := d.Detect(stopReason(r)); ok {
				t.Errorf("%s matched", r)
			}
		}
	})
	t.Run("does not read finish_reason", func(t *testing.T) {
		if _, ok := d.Detect(finishReason("content_filter")); ok {
			t.Error("an OpenAI signal tripped the Anthropic detector")
		}
	})
}

func TestGeminiSafetyDetector(t *testing.T) {
	d := GeminiSafetyDetector(nil)
	t.Run("default set covers the documented reasons", func(t *testing.T) {
		for _, r := range []string{"SAFETY", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "RECITATION",
			"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION"} {
			if _, ok := d.Detect(finishReason(r)); !ok {
				t.Errorf("%s did not match", r)
			}
		}
	})
	t.Run("normal and non-safety ends pass through", func(t *testing.T) {
		for _, r := range []string{"STOP", "MAX_TOKENS", "LANGUAGE", "NO_IMAGE", "OTHER", "IMAGE_OTHER",
			"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "FINISH_REASON_UNSPECIFIED"} {
			if _, ok := d.Detect(finishReason(r)); ok {
				t.Errorf("%s matched", r)
			}
		}
	})
	t.Run("carries safety_ratings", func(t *testing.T) {
		ratings := []any{map[string]any{"category": "HARM_CATEGORY_HARASSMENT", "probability": "HIGH"}}
		got, ok := d.Detect(withMeta(map[string]any{"finish_reason": "SAFETY", "safety_ratings": ratings}, nil))
		if diff := cmp.Diff(map[string]any{"safety_ratings": ratings}, got.Extras); !ok || diff != "" {
			t.Errorf("ok %v, extras (-want +got):\n%s", ok, diff)
		}
	})
}

func TestDefaultSafetyDetectors(t *testing.T) {
	names := func(ds []SafetyDetector) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Name())
		}
		return out
	}
	want := []string{"openai_compatible_content_filter", "anthropic_refusal", "gemini_safety"}
	t.Run("three detectors", func(t *testing.T) {
		if diff := cmp.Diff(want, names(DefaultSafetyDetectors())); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("a fresh list each call", func(t *testing.T) {
		first := DefaultSafetyDetectors()
		first[0] = nil
		if second := DefaultSafetyDetectors(); second[0] == nil || len(second) != 3 {
			t.Error("a caller's change reached a later call")
		}
	})
	t.Run("from a config without detectors", func(t *testing.T) {
		ds, err := SafetyDetectorsFromConfig(config.SafetyFinishReason{Enabled: true})
		if err != nil || !cmp.Equal(want, names(ds)) {
			t.Errorf("%v, %v", names(ds), err)
		}
	})
}

func TestSafetyDetectorsFromConfig(t *testing.T) {
	t.Run("custom detectors with their settings", func(t *testing.T) {
		ds, err := SafetyDetectorsFromConfig(config.SafetyFinishReason{Enabled: true, Detectors: []config.SafetyDetector{
			{Use: config.SafetyDetectorOpenAI, Config: config.SafetyDetectorConfig{FinishReasons: []string{"custom_filter"}}}}})
		if err != nil || len(ds) != 1 {
			t.Fatalf("%v, %v", ds, err)
		}
		if _, ok := ds[0].Detect(finishReason("custom_filter")); !ok {
			t.Error("the configured token does not match")
		}
		if _, ok := ds[0].Detect(finishReason("content_filter")); ok {
			t.Error("the default token still matches")
		}
	})
	t.Run("an empty list is rejected", func(t *testing.T) {
		_, err := SafetyDetectorsFromConfig(config.SafetyFinishReason{Enabled: true, Detectors: []config.SafetyDetector{}})
		if err == nil || !strings.Contains(err.Error(), "enabled=false") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a use that is no detector is rejected", func(t *testing.T) {
		_, err := SafetyDetectorsFromConfig(config.SafetyFinishReason{Enabled: true, Detectors: []config.SafetyDetector{{Use: "builtins:dict"}}})
		if err == nil || !strings.Contains(err.Error(), "builtins:dict") {
			t.Errorf("err = %v", err)
		}
	})
}

var (
	_ SafetyDetector = OpenAIContentFilterDetector(nil)
	_ SafetyDetector = AnthropicRefusalDetector(nil)
	_ SafetyDetector = GeminiSafetyDetector(nil)
)
