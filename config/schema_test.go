package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite schema/*.schema.json from the Go types (go generate ./config)")

// TestSchemaFiles regenerates the schemas in memory and compares them with
// the checked-in files; with -update-schema it writes them instead.
func TestSchemaFiles(t *testing.T) {
	for _, f := range schemaFiles() {
		t.Run(f.name, func(t *testing.T) {
			got, err := f.build()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("schema", f.name)
			if *updateSchema {
				if err := WriteFileAtomic(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v; run go generate ./config", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("config/%s is stale; run go generate ./config (-checked in +generated):\n%s", path, diff)
			}
		})
	}
}

// TestSectionLists checks the section tables that the decoder and the
// schema share: the implemented sections are exactly the yaml keys of
// Config, and no DeerFlow-only section is one of them.
func TestSectionLists(t *testing.T) {
	fields, _ := yamlFields(reflect.TypeFor[Config]())
	keys := slices.Sorted(maps.Keys(fields))
	if diff := cmp.Diff(keys, slices.Sorted(slices.Values(implementedSections()))); diff != "" {
		t.Errorf("implementedSections() differs from the yaml keys of Config (-keys +list):\n%s", diff)
	}
	for _, name := range deerFlowSections() {
		if slices.Contains(keys, name) {
			t.Errorf("%q is both implemented and a DeerFlow-only section", name)
		}
	}
}

// TestSchemasAcceptExampleFiles validates the example files of the
// repository against the checked-in schemas, and checks that the loaders
// accept them too (with their "$schema" lines).
func TestSchemasAcceptExampleFiles(t *testing.T) {
	tests := []struct {
		schema string
		file   string
	}{
		{"config.schema.json", "../config.yaml"},
		{"config.schema.json", "../examples/custom-tool/config.yaml"},
		{"config.schema.json", "testdata/deerflow-config.example.yaml"},
		{"extensions_config.schema.json", "../extensions_config.json"},
		{"extensions_config.schema.json", "testdata/extensions_config.example.json"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if err := validateDoc(t, tt.schema, data); err != nil {
				t.Errorf("%s does not match %s:\n%v", tt.file, tt.schema, err)
			}
			if filepath.Ext(tt.file) == ".json" {
				_, err = ParseExtensions(tt.file, data, anyEnv)
			} else {
				_, err = Parse(tt.file, data, anyEnv)
			}
			if err != nil {
				t.Errorf("loading: %v", err)
			}
		})
	}
}

// TestConfigSchemaDocuments checks the config.yaml schema against the
// loader: what one accepts, the other does too, except where the schema is
// deliberately stricter (loads differs from valid).
func TestConfigSchemaDocuments(t *testing.T) {
	env := envOf(map[string]string{"KEY": "secret", "N": "7"})
	tests := []struct {
		name  string
		doc   string
		valid bool // by the schema
		loads bool // by Parse
	}{
		{
			name:  "null and empty values keep defaults",
			doc:   "tool_search:\n  max_results: null\nskills:\n  path:\nsubagents:\n  agents:\n    a: {model: null, skills: null}\n",
			valid: true, loads: true,
		},
		{
			name:  "env reference in a string",
			doc:   "models:\n  - {name: m, use: u, model: $KEY, api_key: $KEY}\ngateway:\n  tokens:\n    - {token: $KEY, user_id: alice}\n",
			valid: true, loads: true,
		},
		{
			name:  "provider options in models tools and tool groups",
			doc:   "models:\n  - name: m\n    use: u\n    model: x\n    max_tokens: 4096\n    when_thinking_enabled: {extra_body: {thinking: {type: enabled}}}\ntools:\n  - {name: t, group: g, use: u, max_results: 3}\ntool_groups:\n  - {name: g, note: anything}\n",
			valid: true, loads: true,
		},
		{
			name:  "sandbox provider and ignored database keys",
			doc:   "sandbox:\n  use: deerflow.community.aio_sandbox:AioSandboxProvider\n  image: img\n  port: 8080\n  environment: {A: b}\ndatabase:\n  echo_sql: true\n",
			valid: true, loads: true,
		},
		{
			name:  "DeerFlow sections",
			doc:   "memory: {enabled: true}\nscheduler: {enabled: true}\nlog_level: info\n",
			valid: true, loads: true,
		},
		{
			name:  "guardrails with DeerFlow's allowlist provider",
			doc:   "guardrails:\n  enabled: true\n  fail_closed: false\n  passport: null\n  provider:\n    use: deerflow.guardrails.builtin:AllowlistProvider\n    config: {denied_tools: [write_file]}\n",
			valid: true, loads: true,
		},
		{
			name:  "guardrails enabled without a provider",
			doc:   "guardrails: {enabled: true}\n",
			valid: true, loads: false,
		},
		{
			name: "unknown key in guardrails",
			doc:  "guardrails: {enabled: true, failclosed: true}\n",
		},
		{
			name:  "merge keys",
			doc:   "models:\n  - &base {name: a, use: u, model: m}\n  - <<: *base\n    name: b\n",
			valid: true, loads: true,
		},
		{
			name: "unknown top-level key",
			doc:  "sandbx:\n  use: x\n",
		},
		{
			name: "unknown key in a section",
			doc:  "tool_search:\n  enable: true\n",
		},
		{
			name: "unknown key in a list entry",
			doc:  "sandbox:\n  mounts:\n    - {host_path: /a, container_path: /b, ro: true}\n",
		},
		{
			name: "unknown key in a map entry",
			doc:  "subagents:\n  custom_agents:\n    c: {description: d, system_prompt: p, prompt: q}\n",
		},
		{
			name: "string for an integer",
			doc:  "tool_search:\n  max_results: five\n",
		},
		{
			name: "env reference in an integer",
			doc:  "tool_search:\n  max_results: $N\n",
		},
		{
			name: "list for a section",
			doc:  "sandbox: [local]\n",
		},
		{
			name: "model without use",
			doc:  "models:\n  - {name: m, model: x}\n",
		},
		{
			name: "empty required key",
			doc:  "tools:\n  - {name: \"\", group: g, use: u}\n",
		},
		{
			name: "acp agent without command",
			doc:  "acp_agents:\n  a: {description: d}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateDoc(t, "config.schema.json", []byte(tt.doc))
			if got := err == nil; got != tt.valid {
				t.Errorf("schema valid = %v, want %v (%v)", got, tt.valid, err)
			}
			_, err = Parse("config.yaml", []byte(tt.doc), env)
			if got := err == nil; got != tt.loads {
				t.Errorf("Parse succeeded = %v, want %v (%v)", got, tt.loads, err)
			}
		})
	}
}

// TestExtensionsSchemaDocuments does the same for extensions_config.json.
// "Loads" means no error for the file and none for any server.
func TestExtensionsSchemaDocuments(t *testing.T) {
	env := envOf(map[string]string{"TOKEN": "secret"})
	tests := []struct {
		name  string
		doc   string
		valid bool
		loads bool
	}{
		{
			name:  "$schema key",
			doc:   `{"$schema": "./config/schema/extensions_config.schema.json", "mcpServers": {}}`,
			valid: true, loads: true,
		},
		{
			name:  "nulls and env references",
			doc:   `{"mcpServers": {"s": {"type": "http", "url": "$TOKEN", "headers": {"A": "$TOKEN"}, "tool_call_timeout": null, "session_init_timeout": null, "oauth": {"enabled": false, "client_id": null}}}, "skills": null}`,
			valid: true, loads: true,
		},
		{
			name:  "hooks as a string and a list",
			doc:   `{"middlewares": "pkg:Class", "mcpInterceptors": ["pkg:fn"]}`,
			valid: true, loads: true,
		},
		{
			name: "extra keys in a server and a skill", // DeerFlow keeps them
			doc:  `{"mcpServers": {"s": {"command": "npx", "comment": "x"}}, "skills": {"x": {"enabled": true, "note": 1}}}`,
		},
		{
			name: "unknown key in a tool override",
			doc:  `{"mcpServers": {"s": {"command": "npx", "tools": {"t": {"routng": {}}}}}}`,
		},
		{
			name:  "tool override",
			doc:   `{"mcpServers": {"s": {"command": "npx", "tools": {"t": {"routing": {"mode": "prefer"}}}}}}`,
			valid: true, loads: true,
		},
		{
			name: "unknown top-level key",
			doc:  `{"mcp_servers": {}}`,
		},
		{
			name: "string for a list",
			doc:  `{"mcpServers": {"s": {"command": "npx", "args": "-y"}}}`,
		},
		{
			name: "string for a boolean",
			doc:  `{"mcpServers": {"s": {"command": "npx", "enabled": "yes"}}}`,
		},
		{
			name: "unknown key in routing",
			doc:  `{"mcpServers": {"s": {"command": "npx", "routing": {"mode": "prefer", "weight": 2}}}}`,
		},
		{
			name: "list for servers",
			doc:  `{"mcpServers": []}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateDoc(t, "extensions_config.schema.json", []byte(tt.doc))
			if got := err == nil; got != tt.valid {
				t.Errorf("schema valid = %v, want %v (%v)", got, tt.valid, err)
			}
			e, err := ParseExtensions("extensions_config.json", []byte(tt.doc), env)
			if err == nil {
				for _, name := range e.ServerNames() {
					err = errors.Join(err, e.MCPServers[name].Err)
				}
			}
			if got := err == nil; got != tt.loads {
				t.Errorf("ParseExtensions succeeded = %v, want %v (%v)", got, tt.loads, err)
			}
		})
	}
}

// validateDoc validates a YAML (or JSON) document against a checked-in
// schema.
func validateDoc(t *testing.T, schemaName string, doc []byte) error {
	t.Helper()
	c := jsonschema.NewCompiler()
	data, err := os.ReadFile(filepath.Join("schema", schemaName))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", schemaName, err)
	}
	if err := c.AddResource(schemaName, s); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(schemaName)
	if err != nil {
		t.Fatalf("%s: %v", schemaName, err)
	}
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		t.Fatalf("test document: %v", err)
	}
	return sch.Validate(jsonValue(v))
}

// jsonValue converts a decoded YAML value to the values JSON decoding
// produces: string map keys, and timestamps as strings.
func jsonValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = jsonValue(x)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[fmt.Sprint(k)] = jsonValue(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonValue(x)
		}
		return out
	case time.Time:
		return v.Format(time.RFC3339Nano)
	}
	return v
}
