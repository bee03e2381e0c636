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

// UnknownModelKeys returns a warning for each key of a models[] entry
// that is neither a field of [Model], a key DeerFlow's ModelConfig
// declares, nor one of read, the keys Antler's model providers read
// (toolset.ModelOptionKeys). Such a key is most likely a typo
// ("max_token"): DeerFlow passes it to the model class as a keyword
// argument; Antler passes it through in [Model.Options], where no
// provider reads it, so it is a warning naming the nearest known key, not
// an error. Each warning is "FILE:LINE: models[i].KEY: ...", with file as
// the caller names the config file.
func (c *Config) UnknownModelKeys(file string, read []string) []string {
	fields, _ := yamlFields(reflect.TypeFor[Model]())
	known := sortedUnique(slices.Collect(maps.Keys(fields)), deerFlowModelKeys(), read)
	var out []string
	for i, m := range c.Models {
		keys := slices.Sorted(maps.Keys(m.Options))
		for _, k := range keys {
			if _, ok := slices.BinarySearch(known, k); ok {
				continue
			}
			where := file
			if l := m.KeyLines[k]; l > 0 {
				where = fmt.Sprintf("%s:%d", file, l)
			}
			out = append(out, fmt.Sprintf("%s: models[%d].%s: %s; passed through in the entry's options, which no Antler provider reads (DeerFlow passes it to the model class as a keyword argument)",
				where, i, k, UnknownKeyMsg(k, known)))
		}
	}
	return out
}
