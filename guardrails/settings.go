package guardrails

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/antlerhq/antler/config"
)

// Settings reads guardrails.provider.config for a factory. Each getter
// records the key as known; a wrong type is recorded as an error naming
// the key and its line, and Done reports those errors and every key no
// getter asked for (DeerFlow's providers reject unknown keyword
// arguments too).
type Settings struct {
	file string
	spec *config.GuardrailProvider
	seen map[string]bool
	errs []error
}

// NewSettings returns the reader of spec.Config.
func NewSettings(env Env, spec *config.GuardrailProvider) *Settings {
	return &Settings{file: configPath(env.Config), spec: spec, seen: map[string]bool{}}
}

func (s *Settings) fail(key, format string, args ...any) {
	s.errs = append(s.errs, &config.Error{File: s.file, Line: s.spec.ConfigLine(key),
		Key: "guardrails.provider.config." + key, Msg: fmt.Sprintf(format, args...)})
}

func (s *Settings) get(key string) (any, bool) {
	s.seen[key] = true
	v, ok := s.spec.Config[key]
	return v, ok && v != nil
}

// Strings returns a list of strings. ok is false when the key is absent
// or null (nil list); a present empty list is a non-nil empty slice.
func (s *Settings) Strings(key string) ([]string, bool) {
	v, ok := s.get(key)
	if !ok {
		return nil, false
	}
	items, isList := v.([]any)
	if !isList {
		s.fail(key, "must be a list of strings")
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		str, isStr := it.(string)
		if !isStr {
			s.fail(key, "must be a list of strings, got an item %v", it)
			return nil, false
		}
		out = append(out, str)
	}
	return out, true
}

// String returns a string ("" when absent).
func (s *Settings) String(key string) string {
	v, ok := s.get(key)
	if !ok {
		return ""
	}
	str, isStr := v.(string)
	if !isStr {
		s.fail(key, "must be a string")
	}
	return str
}

// StringMap returns a mapping of strings (nil when absent).
func (s *Settings) StringMap(key string) map[string]string {
	v, ok := s.get(key)
	if !ok {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		s.fail(key, "must be a mapping of strings")
		return nil
	}
	out := make(map[string]string, len(m))
	for k, it := range m {
		str, isStr := it.(string)
		if !isStr {
			s.fail(key, "%s must be a string", k)
			continue
		}
		out[k] = str
	}
	return out
}

// Seconds returns a duration given in seconds (more than 0, at most
// limit), def when absent.
func (s *Settings) Seconds(key string, def, limit time.Duration) time.Duration {
	v, ok := s.get(key)
	if !ok {
		return def
	}
	var f float64
	switch n := v.(type) {
	case int:
		f = float64(n)
	case float64:
		f = n
	default:
		s.fail(key, "must be a number of seconds")
		return def
	}
	d := time.Duration(f * float64(time.Second))
	if d <= 0 || d > limit {
		s.fail(key, "must be more than 0 and at most %g seconds, got %v", limit.Seconds(), v)
		return def
	}
	return d
}

// Bytes returns a positive byte count, def when absent, at most limit.
func (s *Settings) Bytes(key string, def, limit int) int {
	v, ok := s.get(key)
	if !ok {
		return def
	}
	n, isInt := v.(int)
	if !isInt || n <= 0 || n > limit {
		s.fail(key, "must be a whole number of bytes from 1 to %d, got %v", limit, v)
		return def
	}
	return n
}

// Done returns the errors recorded and one for each key no getter read.
func (s *Settings) Done() error {
	for _, k := range slices.Sorted(maps.Keys(s.spec.Config)) {
		if !s.seen[k] {
			s.fail(k, "unknown key %q for %s (known: %s)", k, s.spec.Use, knownKeys(s.seen))
		}
	}
	return errors.Join(s.errs...)
}

func knownKeys(seen map[string]bool) string {
	if len(seen) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(seen)), ", ")
}
