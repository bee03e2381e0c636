package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sjson "github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaFor derives the JSON Schema of T's JSON form with
// github.com/google/jsonschema-go (a `jsonschema:"..."` tag is the
// description; fields without omitempty are required), then simplifies it
// for models: nullable types such as ["null","array"] become the plain
// type, since several providers' strict tool modes reject type unions.
// Properties keep the struct's field order, which models read as the
// argument order.
func SchemaFor[T any]() (json.RawMessage, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	simplifySchema(s)
	return json.Marshal(s)
}

// simplifySchema drops "null" from the type unions of s and every schema
// below it. It works on the typed schema, not a generic map, so that
// PropertyOrder survives marshalling.
func simplifySchema(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) > 0 {
		kept := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
		if len(kept) == 1 {
			s.Type, s.Types = kept[0], nil
		}
	}
	for _, c := range []*jsonschema.Schema{s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems,
		s.AdditionalProperties, s.PropertyNames, s.UnevaluatedProperties, s.Not, s.If, s.Then, s.Else, s.ContentSchema} {
		simplifySchema(c)
	}
	for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.ItemsArray, s.AllOf, s.AnyOf, s.OneOf} {
		for _, c := range list {
			simplifySchema(c)
		}
	}
	for _, m := range []map[string]*jsonschema.Schema{s.Defs, s.Definitions, s.Properties, s.PatternProperties,
		s.DependentSchemas, s.DependencySchemas} {
		for _, c := range m {
			simplifySchema(c)
		}
	}
}

// Validator checks tool arguments against an input schema and reports
// every violation with its JSON pointer.
type Validator struct {
	schema *sjson.Schema
}

// NewValidator compiles schema. An empty schema accepts any object.
func NewValidator(schema json.RawMessage) (*Validator, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return &Validator{}, nil
	}
	doc, err := sjson.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("parse input schema: %w", err)
	}
	c := sjson.NewCompiler()
	if err := c.AddResource("mem://input.json", doc); err != nil {
		return nil, fmt.Errorf("load input schema: %w", err)
	}
	s, err := c.Compile("mem://input.json")
	if err != nil {
		return nil, fmt.Errorf("compile input schema: %w", err)
	}
	return &Validator{schema: s}, nil
}

// Validate returns nil when args satisfy the schema, or an error whose
// text lists each violation as "/field: problem".
func (v *Validator) Validate(args json.RawMessage) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	inst, err := sjson.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if _, ok := inst.(map[string]any); !ok {
		return fmt.Errorf("arguments must be a JSON object")
	}
	if v.schema == nil {
		return nil
	}
	err = v.schema.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*sjson.ValidationError)
	if !ok {
		return err
	}
	var problems []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		problems = append(problems, loc+": "+u.Error.String())
	}
	if len(problems) == 0 {
		problems = append(problems, ve.Error())
	}
	problems = slices.Compact(problems)
	return fmt.Errorf("%s", strings.Join(problems, "; "))
}
