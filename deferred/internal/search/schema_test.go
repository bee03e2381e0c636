package search

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// paramsReference is forEachParam written with encoding/json.
func paramsReference(schema []byte) [][2]string {
	type prop struct {
		Description any             `json:"description"`
		Properties  json.RawMessage `json:"properties"`
		Items       json.RawMessage `json:"items"`
	}
	var out [][2]string
	var walk func(raw json.RawMessage, depth int)
	walk = func(raw json.RawMessage, depth int) {
		var keys []string
		props := map[string]json.RawMessage{}
		if json.Unmarshal(raw, &props) != nil {
			return
		}
		// Object order: decode the keys in document order.
		dec := json.NewDecoder(bytesReader(raw))
		dec.Token()
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var skip json.RawMessage
			dec.Decode(&skip)
		}
		seen := map[string]bool{}
		for _, k := range keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			var p prop
			if json.Unmarshal(props[k], &p) != nil {
				continue
			}
			desc, _ := p.Description.(string)
			out = append(out, [2]string{k, desc})
			if depth == 0 {
				if len(p.Properties) > 0 && p.Properties[0] == '{' {
					walk(p.Properties, 1)
				} else if len(p.Items) > 0 && p.Items[0] == '{' {
					var it struct {
						Properties json.RawMessage `json:"properties"`
					}
					if json.Unmarshal(p.Items, &it) == nil && len(it.Properties) > 0 && it.Properties[0] == '{' {
						walk(it.Properties, 1)
					}
				}
			}
		}
	}
	var top struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &top) == nil && len(top.Properties) > 0 && top.Properties[0] == '{' {
		walk(top.Properties, 0)
	}
	return out
}

func scanParams(schema []byte) [][2]string {
	var out [][2]string
	forEachParam(schema, func(n, d []byte) { out = append(out, [2]string{string(n), string(d)}) })
	return out
}

var schemaSeeds = []string{
	`{"type":"object","properties":{"q":{"type":"string","description":"the \"query\" \u00e9"},"n":{"type":"integer"}}}`,
	`{"properties":{"user":{"type":"object","properties":{"name":{"description":"full name"}}},"tags":{"type":"array","items":{"properties":{"label":{"description":"a label"}}}}}}`,
	`{"properties":{"a":{"description":"x","properties":{"b":{"description":"y","properties":{"c":{}}}}}}}`,
	`{"title":"t","properties":{"list":[1,2],"s":"str","z":{"enum":["a}","b]"],"description":"z"}}}`,
	`{}`, `null`, ``,
}

func TestForEachParamMatchesDecoder(t *testing.T) {
	for _, s := range schemaSeeds {
		if diff := cmp.Diff(paramsReference([]byte(s)), scanParams([]byte(s))); diff != "" {
			t.Errorf("%s (-decoder +scanner):\n%s", s, diff)
		}
	}
}

// FuzzForEachParam checks the scanner against encoding/json on valid
// UTF-8 schemas without duplicate keys (the decoder replaces invalid
// UTF-8, the scanner keeps the bytes) or differently cased keywords (the
// decoder matches field names case-insensitively, JSON Schema does not), and that it never panics on any input.
func FuzzForEachParam(f *testing.F) {
	for _, s := range schemaSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := scanParams(b)
		if !json.Valid(b) || !utf8.Valid(b) || hasDuplicateKeys(b) || foldedKeys(string(b)) {
			return
		}
		if diff := cmp.Diff(paramsReference(b), got); diff != "" {
			t.Errorf("%s (-decoder +scanner):\n%s", b, diff)
		}
	})
}

func bytesReader(b []byte) *bytesReaderT { return &bytesReaderT{b: b} }

type bytesReaderT struct {
	b []byte
	i int
}

func (r *bytesReaderT) Read(p []byte) (int, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.i:])
	r.i += n
	return n, nil
}

// hasDuplicateKeys reports whether any object in b repeats a key.
func hasDuplicateKeys(b []byte) bool {
	dec := json.NewDecoder(bytesReader(b))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: v == '{', keys: map[string]bool{}, key: v == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.obj && top.key {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}

// FuzzIndexFoldASCII checks the case-insensitive literal search against
// strings.Index over lowercased ASCII text.
func FuzzIndexFoldASCII(f *testing.F) {
	f.Add("Create a GitHub Issue", "github")
	f.Add("aAaA", "aa")
	f.Fuzz(func(t *testing.T, s, lit string) {
		if !isASCII(s) || !isASCII(lit) {
			return
		}
		lit = strings.ToLower(lit)
		if got, want := indexFoldASCII(s, lit, 0), strings.Index(strings.ToLower(s), lit); got != want {
			t.Errorf("indexFoldASCII(%q, %q) = %d, want %d", s, lit, got, want)
		}
		cr := &catalogRegex{literal: lit}
		if lit != "" {
			if got, want := cr.count(s), strings.Count(strings.ToLower(s), lit); got != want {
				t.Errorf("count(%q, %q) = %d, want %d", s, lit, got, want)
			}
		}
	})
}

// foldedKeys reports whether s spells one of the keywords the scanner
// reads in another case.
func foldedKeys(s string) bool {
	for _, k := range []string{"properties", "description", "items"} {
		if strings.Count(strings.ToLower(s), k) != strings.Count(s, k) {
			return true
		}
	}
	return false
}

func TestLeadEnd(t *testing.T) {
	long := strings.Repeat("word ", 50) // 250 bytes, no sentence end
	tests := []struct {
		name, desc, want string
	}{
		{"first sentence", "Write a file. Use with care.", "Write a file"},
		{"newline", "List issues\nArgs: owner", "List issues"},
		{"dotted name is not a sentence end", "Fetch data.gov records. More.", "Fetch data.gov records"},
		{"short, one sentence", "Get the price", "Get the price"},
		{"long, cut between words", long, long[:199]},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.desc[:leadEnd(tt.desc)]; got != tt.want {
				t.Errorf("lead of %q = %q, want %q", tt.desc, got, tt.want)
			}
		})
	}
}

func FuzzIsWordRune(f *testing.F) {
	f.Add(int32('a'))
	f.Add(int32(0x4E2D))
	f.Fuzz(func(t *testing.T, r int32) {
		if got, want := isWordRune(r), unicode.IsLetter(r) || unicode.IsDigit(r); got != want {
			t.Errorf("isWordRune(%U) = %v, want %v", r, got, want)
		}
	})
}
