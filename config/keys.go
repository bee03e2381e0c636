package config

import (
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

const (
	sectionUnknown = iota
	sectionImplemented
	sectionDeerFlow
)

// sectionKind classifies a top-level key of config.yaml. The implemented
// sections are the yaml keys of [Config].
func sectionKind(name string) int {
	switch {
	case slices.Contains(implementedSections(), name):
		return sectionImplemented
	case slices.Contains(deerFlowSections(), name):
		return sectionDeerFlow
	}
	return sectionUnknown
}

// implementedSections lists the top-level keys Antler decodes. The schema
// test checks that they are exactly the yaml keys of [Config].
func implementedSections() []string {
	return []string{
		"acp_agents", "agents_api", "allow_unenforced", "authorization", "circuit_breaker", "config_version", "database", "gateway", "guardrails", "input_polish", "llm_call", "loop_detection", "mcp_tasks", "memory", "models",
		"read_before_write", "safety_finish_reason", "sandbox", "scheduler", "skill_evolution", "skill_scan", "skills",
		"subagents", "suggestions", "summarization", "title", "token_budget", "token_usage", "tool_groups", "tool_output", "tool_policy", "tool_progress", "tool_search", "tools", "tracing", "uploads",
	}
}

// deerFlowSections lists the top-level sections only DeerFlow implements;
// they are accepted and reported in [Config.Ignored].
func deerFlowSections() []string {
	return []string{
		"agent_storage", "auth", "channel_connections",
		"channels", "checkpointer", "dedupe_storage", "extensions",
		"log_level", "logging",
		"max_recursion_limit", "middlewares", "plugins",
		"run_events", "run_ownership",
		"stream_bridge",
	}
}

// isSandboxProviderKey reports whether key is one of the container-provider
// keys DeerFlow documents for the sandbox section. They go to
// Sandbox.Options.
func isSandboxProviderKey(key string) bool { return slices.Contains(sandboxProviderKeys(), key) }

// sandboxProviderKeys lists the container-provider keys of the sandbox
// section (AIO, BoxLite, provisioner, Tenki and E2B style providers).
func sandboxProviderKeys() []string {
	return []string{
		"image", "port", "replicas", "overflow_policy", "acquire_timeout",
		"burst_limit", "container_prefix", "idle_timeout",
		"health_check_skip_seconds", "ownership", "thread_data_mounts",
		"environment", "provisioner_url", "provisioner_api_key", "memory_mib",
		"cpus", "api_key", "base_url", "project_id", "workspace_id",
		"cpu_cores", "memory_mb", "max_duration", "sticky", "home_dir",
		"template", "timeout", "domain",
	}
}

// databaseIgnoredKeys lists the DeerFlow database keys Antler accepts
// without using them.
func databaseIgnoredKeys() []string {
	return []string{
		"checkpoint_channel_mode", "checkpoint_delta", "checkpoint_graph_cache",
		"checkpoint_cache", "echo_sql", "pool_recycle", "command_timeout",
	}
}

// acceptedKey reports whether a section type accepts key without a field:
// DeerFlow keys Antler does not use (they are ignored) and the sandbox
// provider keys (kept in Options).
func acceptedKey(t reflect.Type, key string) bool {
	switch t {
	case reflect.TypeFor[Sandbox]():
		return isSandboxProviderKey(key)
	case reflect.TypeFor[Database]():
		return slices.Contains(databaseIgnoredKeys(), key)
	case reflect.TypeFor[Memory]():
		return slices.Contains(memoryLegacyKeys(), key)
	}
	return false
}

// checkKeys rejects keys of n that the Go type t does not declare: the
// strict half of decoding (yaml's Node.Decode has no KnownFields). Maps
// with an ",inline" field accept any extra key.
func (p *parser) checkKeys(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.MappingNode:
		switch t.Kind() {
		case reflect.Struct:
			fields, open := yamlFields(t)
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Value == "<<" {
					p.checkKeys(v, t, path)
					continue
				}
				child := joinKey(path, k.Value)
				ft, ok := fields[k.Value]
				switch {
				case ok:
					p.checkKeys(v, ft, child)
				case open || acceptedKey(t, k.Value):
				default:
					p.errorf(k.Line, child, "%s", UnknownKeyMsg(k.Value, knownKeys(t, fields)))
				}
			}
		case reflect.Slice:
			// A single mapping where a list is accepted (ContextSizes).
			p.checkKeys(n, t.Elem(), path)
		case reflect.Map:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p.checkKeys(v, t.Elem(), joinKey(path, k.Value))
			}
		}
	case yaml.SequenceNode:
		if t.Kind() == reflect.Slice {
			for i, item := range n.Content {
				p.checkKeys(item, t.Elem(), indexKey(path, i))
			}
		}
	}
}

// yamlFields returns the yaml keys of struct type t and whether t has an
// inline map that accepts any other key.
func yamlFields(t reflect.Type) (map[string]reflect.Type, bool) {
	fields := map[string]reflect.Type{}
	open := false
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			if f.Type.Kind() == reflect.Map {
				open = true
			} else {
				sub, o := yamlFields(f.Type)
				for k, v := range sub {
					fields[k] = v
				}
				open = open || o
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields, open
}

// knownKeys lists the keys a section type accepts: its fields and the
// DeerFlow keys it accepts without a field.
func knownKeys(t reflect.Type, fields map[string]reflect.Type) []string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	switch t {
	case reflect.TypeFor[Sandbox]():
		names = append(names, sandboxProviderKeys()...)
	case reflect.TypeFor[Database]():
		names = append(names, databaseIgnoredKeys()...)
	}
	return sortedUnique(names)
}
