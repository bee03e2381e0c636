package deferred

import (
	"bytes"
	"encoding/json"
)

// forEachParam calls fn with the name and description of each property
// of an object schema, and of the properties of object-valued and
// array-of-object properties one level down. It scans the JSON once
// without building a tree; a malformed schema yields what was read
// before the error. name and desc are read in place (or unescaped into a
// new slice): fn must not keep or modify them.
func forEachParam(schema []byte, fn func(name, desc []byte)) {
	s := &scanner{b: schema}
	s.object(func(key []byte) bool {
		if string(key) == "properties" && s.peek() == '{' {
			s.properties(0, fn)
			return true
		}
		return false
	})
}

// scanner is a minimal JSON reader over b.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// object reads an object, calling member with each key positioned at its
// value; member reports whether it consumed the value (else it is
// skipped). It returns false on malformed input.
func (s *scanner) object(member func(key []byte) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	for {
		switch s.peek() {
		case '}':
			s.i++
			return true
		case ',':
			s.i++
			continue
		case '"':
		default:
			return false
		}
		key, ok := s.str()
		if !ok || s.peek() != ':' {
			return false
		}
		s.i++
		if !member(key) && !s.skip() {
			return false
		}
	}
}

// properties reads a "properties" object.
func (s *scanner) properties(depth int, fn func(name, desc []byte)) bool {
	return s.object(func(name []byte) bool {
		if s.peek() != '{' {
			return false
		}
		var desc []byte
		var subStart, itemsStart = -1, -1
		s.object(func(k []byte) bool {
			switch string(k) {
			case "description":
				if s.peek() == '"' {
					desc, _ = s.str()
					return true
				}
			case "properties":
				subStart = s.i
			case "items":
				itemsStart = s.i
			}
			return false
		})
		fn(name, desc)
		if depth > 0 {
			return true
		}
		end := s.i
		if subStart >= 0 {
			s.i = subStart
			if s.peek() == '{' {
				s.properties(1, fn)
			}
		} else if itemsStart >= 0 {
			s.i = itemsStart
			s.object(func(k []byte) bool {
				if string(k) == "properties" && s.peek() == '{' {
					s.properties(1, fn)
					return true
				}
				return false
			})
		}
		s.i = end
		return true
	})
}

// str reads a string at s.i and returns its value (a sub-slice of b
// when it has no escapes).
func (s *scanner) str() ([]byte, bool) {
	start := s.i
	s.i++
	escaped := false
	for {
		q := bytes.IndexByte(s.b[s.i:], '"')
		if q < 0 {
			s.i = len(s.b)
			return nil, false
		}
		seg := s.b[s.i : s.i+q]
		bs := bytes.IndexByte(seg, '\\')
		if bs < 0 {
			s.i += q + 1
			break
		}
		// An escape before the quote: step over it and look again.
		escaped = true
		s.i += bs + 2
		if s.i > len(s.b) {
			s.i = len(s.b)
			return nil, false
		}
	}
	if !escaped {
		return s.b[start+1 : s.i-1], true
	}
	var out string
	if err := json.Unmarshal(s.b[start:s.i], &out); err != nil {
		return nil, false
	}
	return []byte(out), true
}

// skip skips one value.
func (s *scanner) skip() bool {
	switch s.peek() {
	case '"':
		_, ok := s.str()
		return ok
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, ok := s.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	case 0:
		return false
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return true
		}
		s.i++
	}
	return true
}
