package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// deerFlowModelKeys are the keys of a models[] entry that DeerFlow's
// ModelConfig declares or its model factory treats as valid keyword
// arguments of every OpenAI-compatible class (DeerFlow's
// models/factory.py), beyond the fields of [Model]. Antler accepts them
// whether or not a provider reads them.
func deerFlowModelKeys() []string {
	return []string{
		"context_window", "default_headers", "default_query", "extra_body",
		"model_kwargs", "output_version", "pricing", "reasoning_effort",
		"stream_chunk_timeout", "stream_usage", "thinking", "use_responses_api",
		"when_thinking_disabled", "when_thinking_enabled",
	}
}

// UnknownModelOptions returns the keys of m.Options, with their values,
// that are neither fields of [Model], keys DeerFlow's ModelConfig
// declares, nor one of read (the keys Antler's providers read,
// toolset.ModelOptionKeys). DeerFlow's LangChain classes move such keys
// into model_kwargs and send them in the request body; providers that
// send a request body do the same with these (nil when there are none).
func UnknownModelOptions(m Model, read []string) map[string]any {
	known := knownModelKeys(read)
	var out map[string]any
	for k, v := range m.Options {
		if _, ok := slices.BinarySearch(known, k); ok {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = v
	}
	return out
}

func knownModelKeys(read []string) []string {
	fields, _ := yamlFields(reflect.TypeFor[Model]())
	return sortedUnique(slices.Collect(maps.Keys(fields)), deerFlowModelKeys(), read)
}

// UnknownModelKeys returns a warning for each key of a models[] entry
// that [UnknownModelOptions] returns. Such a key is most likely a typo
// ("max_token"), but DeerFlow passes it on to the provider, so it is a
// warning naming the nearest known key and saying where it goes, not an
// error: sends reports whether the entry's provider (by its use string)
// sends such keys in its request body; where it does not, the warning
// says the key is not sent. Each warning is "FILE:LINE: models[i].KEY:
// ...", with file as the caller names the config file.
func (c *Config) UnknownModelKeys(file string, read []string, sends func(use string) bool) []string {
	known := knownModelKeys(read)
	var out []string
	for i, m := range c.Models {
		unknown := UnknownModelOptions(m, read)
		for _, k := range slices.Sorted(maps.Keys(unknown)) {
			where := file
			if l := m.KeyLines[k]; l > 0 {
				where = fmt.Sprintf("%s:%d", file, l)
			}
			fate := "passed through: sent in the request body, as DeerFlow sends a model keyword argument it does not know"
			if sends != nil && !sends(m.Use) {
				fate = fmt.Sprintf("not sent: the provider of %q takes no extra request fields (DeerFlow would pass it to the model class)", m.Use)
			}
			out = append(out, fmt.Sprintf("%s: models[%d].%s: %s; %s", where, i, k, UnknownKeyMsg(k, known), fate))
		}
	}
	return out
}
