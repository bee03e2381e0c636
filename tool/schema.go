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
func SchemaFor[T any]() (json.RawMessage, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	simplifySchema(doc)
	return json.Marshal(doc)
}

func simplifySchema(v any) {
	switch n := v.(type) {
	case map[string]any:
		if types, ok := n["type"].([]any); ok {
			var kept []any
			for _, t := range types {
				if t != "null" {
					kept = append(kept, t)
				}
			}
			if len(kept) == 1 {
				n["type"] = kept[0]
			}
		}
		for _, child := range n {
			simplifySchema(child)
		}
	case []any:
		for _, child := range n {
			simplifySchema(child)
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
