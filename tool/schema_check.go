package tool

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// SchemaAgrees reports whether a hand-written input schema describes the
// same arguments as the struct In decodes them into: the same property
// names at every level of objects and arrays of objects, the same types
// where both name one, and the same required properties (a field without
// omitempty is required). A hand-written schema may say more than In (an
// enum, a default, a description, bounds); it may not say something
// else. NewWithSchema calls it, so that a tool whose schema and struct
// drift apart fails when it is built.
func SchemaAgrees[In any](schema json.RawMessage) error {
	derived, err := SchemaFor[In]()
	if err != nil {
		return err
	}
	var hand, want map[string]any
	if err := json.Unmarshal(schema, &hand); err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	if err := json.Unmarshal(derived, &want); err != nil {
		return err
	}
	var problems []string
	compareSchemas("", hand, want, &problems)
	if len(problems) > 0 {
		return fmt.Errorf("input schema and %T disagree: %s", *new(In), strings.Join(problems, "; "))
	}
	return nil
}

// compareSchemas appends to problems where the schema hand and the
// schema want (derived from a struct) disagree, at path.
func compareSchemas(path string, hand, want map[string]any, problems *[]string) {
	at := path
	if at == "" {
		at = "/"
	}
	if ht, wt := schemaType(hand), schemaType(want); ht != "" && wt != "" && ht != wt &&
		!(ht == "integer" && wt == "number") {
		*problems = append(*problems, fmt.Sprintf("%s: type %s, struct has %s", at, ht, wt))
	}
	if hi, ok := hand["items"].(map[string]any); ok {
		if wi, ok := want["items"].(map[string]any); ok {
			compareSchemas(path+"/items", hi, wi, problems)
		}
	}
	hp, hok := hand["properties"].(map[string]any)
	wp, wok := want["properties"].(map[string]any)
	if !hok || !wok {
		return
	}
	for _, name := range sortedNames(hp) {
		if _, ok := wp[name]; !ok {
			*problems = append(*problems, fmt.Sprintf("%s/%s: no such field in the struct", path, name))
		}
	}
	for _, name := range sortedNames(wp) {
		hs, ok := hp[name].(map[string]any)
		if !ok {
			*problems = append(*problems, fmt.Sprintf("%s/%s: field missing from the schema", path, name))
			continue
		}
		ws, _ := wp[name].(map[string]any)
		compareSchemas(path+"/"+name, hs, ws, problems)
	}
	hr, wr := stringSet(hand["required"]), stringSet(want["required"])
	if !slices.Equal(hr, wr) {
		*problems = append(*problems, fmt.Sprintf("%s: required %v, struct requires %v (fields without omitempty)", at, hr, wr))
	}
}

func schemaType(s map[string]any) string {
	t, _ := s["type"].(string)
	return t
}

func sortedNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func stringSet(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
