package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
)

// This file builds the JSON Schemas in schema/ from the Go types of the
// package (see generate.go). github.com/invopop/jsonschema reflects the
// types, naming fields by their yaml (config.yaml) or json
// (extensions_config.json) tags and describing them with the Go doc
// comments; the passes below then follow what the decoders accept beyond
// the types: inline provider options, accepted DeerFlow keys, required keys,
// defaults, and null for "keep the default".

const pkgPath = "github.com/antlerhq/antler/config"

// schemaFile is one generated file under schema/.
type schemaFile struct {
	name  string
	build func() ([]byte, error)
}

func schemaFiles() []schemaFile {
	return []schemaFile{
		{"config.schema.json", configSchema},
		{"extensions_config.schema.json", extensionsSchema},
	}
}

// object is a schema (or any JSON object) being post-processed.
type object = map[string]any

// requiredKeys lists, per entry type of config.yaml, the keys that validate
// reports as required (missing or empty).
func requiredKeys() map[reflect.Type][]string {
	return map[reflect.Type][]string{
		reflect.TypeFor[Model]():          {"name", "use", "model"},
		reflect.TypeFor[ToolGroup]():      {"name"},
		reflect.TypeFor[ToolEntry]():      {"name", "group", "use"},
		reflect.TypeFor[Mount]():          {"host_path", "container_path"},
		reflect.TypeFor[CustomSubagent](): {"description", "system_prompt"},
		reflect.TypeFor[ACPAgent]():       {"command", "description"},
		reflect.TypeFor[SafetyDetector](): {"use"},
	}
}

func configSchema() ([]byte, error) {
	r, err := newReflector("yaml")
	if err != nil {
		return nil, err
	}
	root, err := reflectObject(r, reflect.TypeFor[Config]())
	if err != nil {
		return nil, err
	}
	defs := root["$defs"].(object)
	def := func(t reflect.Type) object {
		if t == reflect.TypeFor[Config]() {
			return root
		}
		return defs[t.Name()].(object)
	}

	for _, t := range structTypes(reflect.TypeFor[Config]()) {
		// Entries with an ",inline" map (models[], tools[], tool_groups[])
		// keep every other key as a provider option.
		if _, open := yamlFields(t); open {
			def(t)["additionalProperties"] = inlineSchema(r, t)
		}
	}
	props := properties(root)
	for _, name := range deerFlowSections() {
		props[name] = object{"description": "DeerFlow section; Antler accepts and ignores it."}
	}
	props = properties(def(reflect.TypeFor[Sandbox]()))
	for _, name := range sandboxProviderKeys() {
		props[name] = object{"description": "Container sandbox provider option, passed to the provider (Antler's local sandbox ignores it)."}
	}
	props = properties(def(reflect.TypeFor[Database]()))
	for _, name := range databaseIgnoredKeys() {
		props[name] = object{"description": "DeerFlow key; Antler accepts and ignores it."}
	}
	for t, keys := range requiredKeys() {
		require(def(t), keys)
	}

	setDefaults(def, "yaml", root, reflect.ValueOf(*Default()), true)
	setDefaults(def, "yaml", def(reflect.TypeFor[CustomSubagent]()), reflect.ValueOf(defaultCustomSubagent()), false)
	setDefaults(def, "yaml", def(reflect.TypeFor[ACPAgent]()), reflect.ValueOf(defaultACPAgent()), false)
	nullable(root)
	summarizationSchema(defs)

	root["title"] = "Antler config.yaml"
	root["description"] = "DeerFlow-compatible config.yaml as Antler reads it. Generated from the Go types of package " +
		"github.com/antlerhq/antler/config by `go generate ./config`; do not edit. " +
		`A string value "$NAME" is read from the environment variable NAME (number and boolean keys take literal values only); ` +
		"null or an empty value keeps a key's default. Sections Antler implements reject unknown keys, " +
		"except provider options in models[], tools[] and tool_groups[] entries."
	return encode(root)
}

func extensionsSchema() ([]byte, error) {
	r, err := newReflector("json")
	if err != nil {
		return nil, err
	}
	// The mirror types are unexported; describe them with the comments of
	// the exported types they load into.
	r.LookupComment = func(t reflect.Type, field string) string {
		switch t {
		case reflect.TypeFor[rawServer](), reflect.TypeFor[mcpServerFile]():
			return r.CommentMap[commentKey("MCPServer", field)]
		case reflect.TypeFor[extensionsFile]():
			return r.CommentMap[commentKey("Extensions", field)]
		}
		return ""
	}
	r.Namer = func(t reflect.Type) string {
		switch t {
		case reflect.TypeFor[mcpServerFile]():
			return "MCPServer"
		case reflect.TypeFor[toolOverrideFile]():
			return "MCPToolOverride"
		}
		return ""
	}
	root, err := reflectObject(r, reflect.TypeFor[extensionsFile]())
	if err != nil {
		return nil, err
	}
	defs := root["$defs"].(object)

	// Every object is strict, as ParseExtensions is (checkJSONKeys).
	props := properties(root)
	props["$schema"] = object{"type": "string", "description": "The JSON Schema of this file, for editors; Antler ignores it."}
	// Middlewares and MCPInterceptors share one doc comment.
	hooks := r.CommentMap[commentKey("Extensions", "Middlewares")]
	for _, key := range []string{"middlewares", "mcpInterceptors"} {
		props[key] = object{
			"description": hooks,
			"anyOf":       []any{object{"type": "string"}, object{"type": "array", "items": object{"type": "string"}}},
		}
	}
	server := properties(defs["MCPServer"].(object))
	server["transport"].(object)["description"] = `Alias of "type", used when "type" is absent.`
	server["tools"].(object)["description"] = "Per-tool overrides by original tool name."
	defs["MCPToolOverride"].(object)["description"] = "The overrides of one tool: its routing hint, over the server's."

	def := func(t reflect.Type) object { return defs[t.Name()].(object) }
	setDefaults(def, "json", def(reflect.TypeFor[OAuth]()), reflect.ValueOf(defaultOAuth()), false)
	nullable(root)

	root["title"] = "Antler extensions_config.json"
	root["description"] = "DeerFlow-compatible extensions_config.json (MCP servers and skill states) as Antler reads it. " +
		"Generated from the Go types of package github.com/antlerhq/antler/config by `go generate ./config`; do not edit. " +
		`A string value "$NAME" is read from the environment variable NAME (a missing one becomes "" with a warning, ` +
		"or an error for that server in the headers and env of an enabled server)."
	return encode(root)
}

// bareValue matches a field comment that only states a default value
// ("// 3", "// true", `// "auto"`); the schema carries those as "default".
var bareValue = regexp.MustCompile(`^(-?[0-9][0-9_.]*|true|false|"[^"]*"|\[[^\]]*\])$`)

// newReflector returns a reflector that names fields by tag and describes
// types and fields with the doc comments of this package.
func newReflector(tag string) (*jsonschema.Reflector, error) {
	r := &jsonschema.Reflector{
		FieldNameTag:               tag,
		RequiredFromJSONSchemaTags: true, // required keys come from requiredKeys, not from omitempty
		ExpandedStruct:             true,
		Anonymous:                  true,
	}
	if err := r.AddGoComments(pkgPath, "."); err != nil {
		return nil, fmt.Errorf("reading doc comments: %w", err)
	}
	for k, v := range r.CommentMap {
		v = strings.Join(strings.Fields(v), " ")
		if bareValue.MatchString(v) {
			delete(r.CommentMap, k)
			continue
		}
		r.CommentMap[k] = v
	}
	return r, nil
}

// commentKey is the CommentMap key of a type of this package, or of one of
// its fields.
func commentKey(typ, field string) string {
	if field == "" {
		return pkgPath + "." + typ
	}
	return pkgPath + "." + typ + "." + field
}

// require marks keys of s as required: present and not empty, as
// validate checks them (see nullable).
func require(s object, keys []string) {
	s["required"] = keys
	props := properties(s)
	for _, k := range keys {
		props[k].(object)["minLength"] = 1
	}
}

// reflectObject reflects t and returns the schema as a generic object.
func reflectObject(r *jsonschema.Reflector, t reflect.Type) (object, error) {
	data, err := json.Marshal(r.ReflectFromType(t))
	if err != nil {
		return nil, err
	}
	var o object
	return o, json.Unmarshal(data, &o)
}

// encode renders a schema as indented JSON with a final newline.
func encode(o object) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(o); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func properties(s object) object {
	p, _ := s["properties"].(object)
	if p == nil {
		p = object{}
		s["properties"] = p
	}
	return p
}

// structTypes returns the struct types reachable from t through fields
// that have a yaml key, t first.
func structTypes(t reflect.Type) []reflect.Type {
	var out []reflect.Type
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		out = append(out, t)
		for _, ft := range fieldTypes(t) {
			visit(ft)
		}
	}
	visit(t)
	return out
}

// fieldTypes returns the types of t's fields that have a yaml key, in
// field order.
func fieldTypes(t reflect.Type) []reflect.Type {
	fields, _ := yamlFields(t)
	var out []reflect.Type
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && fields[name] != nil {
			out = append(out, f.Type)
		}
	}
	return out
}

// inlineSchema describes the extra keys kept by t's ",inline" map field.
func inlineSchema(r *jsonschema.Reflector, t reflect.Type) any {
	for f := range t.Fields() {
		if strings.Contains(f.Tag.Get("yaml"), "inline") && f.Type.Kind() == reflect.Map {
			if c := r.CommentMap[commentKey(t.Name(), f.Name)]; c != "" {
				return object{"description": c}
			}
		}
	}
	return true
}

// setDefaults records the values of v, a struct starting from its
// defaults, as the "default" of the matching properties of s, descending
// into struct-valued fields through def. At the top level only sections
// (structs) get defaults.
func setDefaults(def func(reflect.Type) object, tag string, s object, v reflect.Value, top bool) {
	props := properties(s)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get(tag), ",")
		if name == "" || name == "-" || strings.Contains(opts, "inline") {
			continue
		}
		p, ok := props[name].(object)
		if !ok {
			continue
		}
		fv := v.Field(i)
		switch fv.Kind() {
		case reflect.Struct:
			setDefaults(def, tag, def(fv.Type()), fv, false)
		case reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
			if !top {
				p["default"] = fv.Interface()
			}
		case reflect.String:
			if !top && fv.String() != "" {
				p["default"] = fv.Interface()
			}
		case reflect.Slice, reflect.Map:
			if !top && !fv.IsNil() {
				p["default"] = fv.Interface()
			}
		}
	}
}

// nullable lets every property of the root and of every definition be
// null, which both decoders read as "keep the default" (yaml.v3 and
// encoding/json leave the field alone), except required keys. A property
// that refers to a definition (a section) makes that definition nullable,
// which keeps editor messages about the section direct; entries of lists
// and maps stay non-null.
func nullable(root object) {
	defs, _ := root["$defs"].(object)
	objects := []object{root}
	for _, d := range defs {
		objects = append(objects, d.(object))
	}
	for _, s := range objects {
		props, _ := s["properties"].(object)
		required, _ := s["required"].([]string)
		for name, p := range props {
			if slices.Contains(required, name) {
				continue
			}
			p := p.(object)
			if ref, ok := p["$ref"].(string); ok {
				p = defs[strings.TrimPrefix(ref, "#/$defs/")].(object)
			}
			if t, ok := p["type"].(string); ok {
				p["type"] = []any{t, "null"}
			}
		}
	}
}

// summarizationSchema follows what the decoder accepts for thresholds: a
// ContextSize needs both keys (the defaults belong to keep, not to every
// threshold), and trigger is one mapping or a list of them.
func summarizationSchema(defs object) {
	cs := defs["ContextSize"].(object)
	props := properties(cs)
	typ, val := props["type"].(object), props["value"].(object)
	delete(typ, "default")
	delete(val, "default")
	typ["type"], typ["enum"] = "string", []any{ContextFraction, ContextTokens, ContextMessages}
	val["type"], val["exclusiveMinimum"] = "number", 0
	cs["required"] = []string{"type", "value"}
	cs["type"] = "object"
	ref := object{"$ref": "#/$defs/ContextSize"}
	list := defs["ContextSizes"].(object)
	defs["ContextSizes"] = object{
		"description": list["description"],
		"anyOf":       []any{ref, object{"type": "array", "items": ref}, object{"type": "null"}},
	}
	s := properties(defs["Summarization"].(object))
	s["keep"].(object)["default"] = object{"type": ContextMessages, "value": DefaultSummaryKeepMessages}
	s["trim_tokens_to_summarize"].(object)["default"] = DefaultSummaryTrimTokens
	s["trim_tokens_to_summarize"].(object)["minimum"] = 1
}
