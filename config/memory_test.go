package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMemorySection(t *testing.T) {
	const models = "models:\n  - {name: main, use: x:Y, model: gpt-4o}\n  - {name: cheap, use: x:Y, model: gpt-4o-mini}\n"
	for _, tc := range []struct {
		name    string
		src     string
		check   func(t *testing.T, m Memory)
		warning string
	}{
		{"absent is off", models, func(t *testing.T, m Memory) {
			if m.Enabled || m.MemoryOn() {
				t.Errorf("memory on without a section: %+v", m)
			}
		}, ""},
		{"present takes DeerFlow's defaults", models + "memory:\n  manager_class: deermem\n", func(t *testing.T, m Memory) {
			want := defaultMemory()
			if diff := cmp.Diff(want, m); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		}, ""},
		{"legacy top-level keys move under backend_config", models + "memory:\n  max_facts: 50\n  model_name: cheap\n  backend_config:\n    debounce_seconds: 5\n", func(t *testing.T, m Memory) {
			b := m.BackendConfig
			if b.MaxFacts != 50 || b.Model.Model != "cheap" || b.DebounceSeconds != 5 {
				t.Errorf("backend = %+v", b)
			}
		}, "moved max_facts, model_name under memory.backend_config"},
		{"explicit backend_config wins over a legacy key", models + "memory:\n  max_facts: 50\n  backend_config: {max_facts: 60}\n", func(t *testing.T, m Memory) {
			if m.BackendConfig.MaxFacts != 60 {
				t.Errorf("max_facts = %d, want 60", m.BackendConfig.MaxFacts)
			}
		}, ""},
		{"model by model id", models + "memory:\n  backend_config: {model: {model: gpt-4o-mini}}\n", func(t *testing.T, m Memory) {
			if m.BackendConfig.Model.Model != "gpt-4o-mini" {
				t.Errorf("model = %+v", m.BackendConfig.Model)
			}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, tc.src, anyEnv)
			tc.check(t, c.Memory)
			got := strings.Join(c.Warnings, "\n")
			if tc.warning != "" && !strings.Contains(got, tc.warning) {
				t.Errorf("warnings %q, want %q", got, tc.warning)
			}
		})
	}
}

func TestMemorySection_refused(t *testing.T) {
	const models = "models:\n  - {name: main, use: x:Y, model: gpt-4o}\n"
	for _, tc := range []struct{ name, src, want string }{
		{"another backend", "memory:\n  manager_class: mem0\n", `memory.manager_class: "mem0" is not implemented`},
		{"bad mode", "memory:\n  mode: both\n", "memory.mode: must be middleware or tool"},
		{"flush out of range", "memory:\n  shutdown_flush_timeout_seconds: 0.5\n", "memory.shutdown_flush_timeout_seconds: must be between 1 and 300"},
		{"max_facts out of range", "memory:\n  backend_config: {max_facts: 5}\n", "memory.backend_config.max_facts: must be between 10 and 500"},
		{"consolidation", "memory:\n  backend_config: {consolidation_enabled: true}\n", "memory.backend_config.consolidation_enabled: is not implemented by Antler"},
		{"hybrid eviction", "memory:\n  backend_config: {fact_eviction_policy: hybrid-v1}\n", "fact_eviction_policy: is not implemented"},
		{"a second client", "memory:\n  backend_config: {model: {provider: openai, model: gpt-4o}}\n", "memory.backend_config.model: is not implemented by Antler"},
		{"unknown model", "memory:\n  backend_config: {model: {model: nope}}\n", `no model named "nope"`},
		{"storage class", "memory:\n  backend_config: {storage_class: my.mod:Store}\n", "storage_class: must be file or store"},
		{"manifest path", "memory:\n  backend_config: {manifest_filename: ../x.json}\n", "manifest_filename: must be a plain .json file name"},
		{"unknown key", "memory:\n  backend_config: {max_fact: 5}\n", `unknown key "max_fact"`},
		{"unknown top key", "memory:\n  enable: true\n", `unknown key "enable"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(models+tc.src), anyEnv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
