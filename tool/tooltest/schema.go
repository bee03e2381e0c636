package tooltest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	sjson "github.com/santhosh-tekuri/jsonschema/v6"
)

// schema is a tool's input schema that passed the checks.
type schema struct {
	compiled *sjson.Schema
	// order is the property names in document order.
	order    []string
	props    map[string]json.RawMessage
	required []string
}

// noLoader refuses every $ref outside the schema, so that a schema with
// a remote reference fails to compile instead of reaching the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %s: tool input schemas must be self-contained", url)
}

// checkSchema reports the schema's violations and returns it parsed, or
// nil when it is too broken for the argument checks.
func checkSchema(r *report, raw json.RawMessage) *schema {
	if len(bytes.TrimSpace(raw)) == 0 {
		r.fail(RuleSchema, "the input schema is empty")
		return nil
	}
	if !json.Valid(raw) {
		r.fail(RuleSchema, "the input schema is not valid JSON")
		return nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		r.fail(RuleSchema, "the input schema is not a JSON object")
		return nil
	}
	s := &schema{}
	var typ any
	_ = json.Unmarshal(top["type"], &typ)
	if typ != "object" {
		r.fail(RuleSchema, `the input schema's top-level "type" is %s, want "object"`, orMissing(top["type"]))
	}

	doc, err := sjson.UnmarshalJSON(bytes.NewReader(raw))
	if err == nil {
		c := sjson.NewCompiler()
		c.DefaultDraft(sjson.Draft2020)
		c.UseLoader(noLoader{})
		if err = c.AddResource("mem://input_schema.json", doc); err == nil {
			s.compiled, err = c.Compile("mem://input_schema.json")
		}
	}
	if err != nil {
		r.fail(RuleSchema, "the input schema does not compile: %v", err)
	}

	if p, ok := top["properties"]; ok {
		if err := json.Unmarshal(p, &s.props); err != nil {
			r.fail(RuleSchema, `"properties" is not an object`)
		}
		s.order = keysInOrder(p)
	}
	if req, ok := top["required"]; ok {
		if err := json.Unmarshal(req, &s.required); err != nil {
			r.fail(RuleSchema, `"required" is not a list of strings`)
		}
	}
	for _, name := range s.required {
		if _, ok := s.props[name]; !ok {
			r.fail(RuleSchema, "required property %q is not in \"properties\"", name)
		}
	}
	if s.compiled == nil {
		return nil
	}
	return s
}

func orMissing(raw json.RawMessage) string {
	if raw == nil {
		return "missing"
	}
	return string(raw)
}

// keysInOrder returns the keys of a JSON object in document order.
func keysInOrder(obj json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

// validate checks args against the compiled schema.
func (s *schema) validate(args []byte) error {
	inst, err := sjson.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if _, ok := inst.(map[string]any); !ok {
		return errors.New("not a JSON object")
	}
	return s.compiled.Validate(inst)
}

// wrongValues are candidate values for a property of the wrong type,
// each with the JSON Schema types it satisfies.
var wrongValues = []struct {
	value string
	types []string
}{
	{`12345`, []string{"number", "integer"}},
	{`"tooltest"`, []string{"string"}},
	{`true`, []string{"boolean"}},
	{`["tooltest"]`, []string{"array"}},
	{`{"tooltest":1}`, []string{"object"}},
}

// invalidArgs returns argument objects that violate the schema, built on
// base (the sample arguments, or nothing): the first property that
// declares a type set to a value of another type, and, when properties
// are required, no arguments at all and base without the first required
// property. Every case is checked against the compiled schema; notes say
// which cases could not be made.
func (s *schema) invalidArgs(base []byte) (cases [][]byte, notes []string) {
	obj := map[string]json.RawMessage{}
	if len(base) > 0 && json.Unmarshal(base, &obj) != nil {
		obj = map[string]json.RawMessage{}
	}
	add := func(what string, m map[string]json.RawMessage) {
		b, err := json.Marshal(m)
		if err != nil {
			return
		}
		if s.validate(b) == nil {
			notes = append(notes, fmt.Sprintf("%s %s satisfies the schema; case skipped", what, b))
			return
		}
		cases = append(cases, b)
	}

	prop, wrong := s.wrongTyped()
	if prop == "" {
		notes = append(notes, "no property declares a type: wrong-type case skipped")
	} else {
		m := maps.Clone(obj)
		m[prop] = json.RawMessage(wrong)
		add("wrong-type case", m)
	}
	if len(s.required) > 0 {
		add("missing-required case", map[string]json.RawMessage{})
		if len(obj) > 0 {
			m := maps.Clone(obj)
			delete(m, s.required[0])
			add("missing-required case", m)
		}
	}
	return cases, notes
}

// wrongTyped returns the first property (in document order) that
// declares a type, and a value of another type.
func (s *schema) wrongTyped() (prop, value string) {
	for _, name := range s.order {
		var p struct {
			Type json.RawMessage `json:"type"`
		}
		if json.Unmarshal(s.props[name], &p) != nil || p.Type == nil {
			continue
		}
		var types []string
		var one string
		if json.Unmarshal(p.Type, &one) == nil {
			types = []string{one}
		} else if json.Unmarshal(p.Type, &types) != nil {
			continue
		}
		for _, w := range wrongValues {
			if !slices.ContainsFunc(w.types, func(t string) bool { return slices.Contains(types, t) }) {
				return name, w.value
			}
		}
	}
	return "", ""
}
