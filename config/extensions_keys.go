package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
)

// This file rejects the keys of extensions_config.json that Antler does not
// read, each with its line and the nearest known key. The known keys are
// the json tags of the types below, which are also what the JSON Schema is
// generated from (schema_gen_test.go), so a field added to rawServer is
// known everywhere without a second edit.

// extensionsFile is the top level of extensions_config.json as
// ParseExtensions reads it (section by section from a map).
type extensionsFile struct {
	Schema          string                   `json:"$schema"`
	MCPServers      map[string]mcpServerFile `json:"mcpServers"`
	Skills          map[string]SkillState    `json:"skills"`
	Middlewares     []string                 `json:"middlewares"`
	MCPInterceptors []string                 `json:"mcpInterceptors"`
}

// mcpServerFile is rawServer with the fields that it keeps raw (and decodes
// afterwards) replaced by the types they are decoded into.
type mcpServerFile struct {
	rawServer
	OAuth              *OAuth                      `json:"oauth"`
	Routing            *Routing                    `json:"routing"`
	SessionInitTimeout *float64                    `json:"session_init_timeout"`
	Tools              map[string]toolOverrideFile `json:"tools"`
}

// toolOverrideFile is one entry of a server's "tools": the per-tool
// overrides Antler reads.
type toolOverrideFile struct {
	Routing *Routing `json:"routing"`
}

// jsonNode is a JSON value with the lines of its object keys, built by
// parseJSONTree.
type jsonNode struct {
	line    int // line where the value starts
	members []jsonMember
	items   []*jsonNode
}

// jsonMember is one key of an object and its value.
type jsonMember struct {
	name string
	line int // line of the key
	val  *jsonNode
}

// member returns the value of the first key name of n, or nil.
func (n *jsonNode) member(name string) *jsonMember {
	if n == nil {
		return nil
	}
	for i := range n.members {
		if n.members[i].name == name {
			return &n.members[i]
		}
	}
	return nil
}

// parseJSONTree reads one JSON value from data with the line of every
// object key, computed from the decoder's byte offsets. data must be
// valid JSON (json.Unmarshal has accepted it).
func parseJSONTree(data []byte) (*jsonNode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return readJSONValue(dec, data)
}

func readJSONValue(dec *json.Decoder, data []byte) (*jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	// The offset is just past the token: its last byte is on its line.
	n := &jsonNode{line: lineAt(data, dec.InputOffset()-1)}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name, _ := k.(string)
			line := lineAt(data, dec.InputOffset()-1)
			v, err := readJSONValue(dec, data)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, jsonMember{name: name, line: line, val: v})
		}
		_, err = dec.Token() // '}'
	case json.Delim('['):
		for dec.More() {
			v, err := readJSONValue(dec, data)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		_, err = dec.Token() // ']'
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// checkJSONKeys returns an error for every object key under n that the
// Go type t (a struct with json tags, a map, a slice or a pointer to one)
// does not declare. Values of other types (json.RawMessage, strings,
// numbers) are not looked into.
func checkJSONKeys(file string, n *jsonNode, t reflect.Type, path string) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var errs []error
	switch t.Kind() {
	case reflect.Struct:
		fields := jsonFields(t)
		known := make([]string, 0, len(fields))
		for k := range fields {
			known = append(known, k)
		}
		known = sortedUnique(known)
		for _, m := range n.members {
			child := joinKey(path, m.name)
			ft, ok := fields[m.name]
			if !ok {
				errs = append(errs, &Error{File: file, Line: m.line, Key: child, Msg: UnknownKeyMsg(m.name, known)})
				continue
			}
			errs = append(errs, checkJSONKeys(file, m.val, ft, child)...)
		}
	case reflect.Map:
		for _, m := range n.members {
			errs = append(errs, checkJSONKeys(file, m.val, t.Elem(), joinKey(path, m.name))...)
		}
	case reflect.Slice:
		if t == reflect.TypeFor[json.RawMessage]() {
			break
		}
		for i, item := range n.items {
			errs = append(errs, checkJSONKeys(file, item, t.Elem(), indexKey(path, i))...)
		}
	}
	return errs
}

// jsonFields returns the json keys of struct type t and their types. A
// field of t shadows a field of the same key in an embedded struct, as in
// encoding/json.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			embedded = append(embedded, f.Type)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	for _, et := range embedded {
		for k, v := range jsonFields(et) {
			if _, shadowed := out[k]; !shadowed {
				out[k] = v
			}
		}
	}
	return out
}

// MCPServerKeys returns, sorted, the keys an mcpServers entry may have
// (the json tags of the entry's types).
func MCPServerKeys() []string {
	var out []string
	for k := range jsonFields(reflect.TypeFor[mcpServerFile]()) {
		out = append(out, k)
	}
	return sortedUnique(out)
}
