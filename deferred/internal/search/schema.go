package search

import (
	"encoding/json"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
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
	b   []byte
	i   int
	buf []byte // unescaped strings, back to back
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

// str reads a string at s.i and returns its value: a sub-slice of b
// when it has no escapes, else unescaped into s.buf.
func (s *scanner) str() ([]byte, bool) {
	start := s.i
	escaped, ok := s.skipStr()
	if !ok {
		return nil, false
	}
	raw := s.b[start+1 : s.i-1]
	if !escaped {
		return raw, true
	}
	from := len(s.buf)
	if buf, ok := unescape(s.buf, raw); ok {
		s.buf = buf
		return s.buf[from:len(s.buf):len(s.buf)], true
	}
	// Anything unusual (control or non-ASCII bytes, surrogates, bad
	// escapes) is left to encoding/json.
	var out string
	if err := json.Unmarshal(s.b[start:s.i], &out); err != nil {
		return nil, false
	}
	return []byte(out), true
}

// skipStr steps over the string at s.i and reports whether it holds
// escapes.
func (s *scanner) skipStr() (escaped, ok bool) {
	for i := s.i + 1; ; i += 2 { // an escape: step over it and look again
		i = quoteOrBackslash(s.b, i)
		if i >= len(s.b) {
			s.i = len(s.b)
			return false, false
		}
		if s.b[i] == '"' {
			s.i = i + 1
			return escaped, true
		}
		escaped = true
		if i+2 > len(s.b) {
			s.i = len(s.b)
			return false, false
		}
	}
}

// quoteOrBackslash returns the index of the first '"' or '\\' in b at
// or after i, len(b) when there is none. It tests eight bytes at a time:
// strings in schemas are mostly short, and a byte search per string
// costs more in calls than it saves.
func quoteOrBackslash(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := load64(b, i)
		q, bs := x^'"'*ones, x^'\\'*ones
		// The lowest byte set is the first zero byte of q or bs (bytes
		// above it can be wrong, but are not looked at).
		if m := ((q-ones)&^q | (bs-ones)&^bs) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '"' || b[i] == '\\' {
			break
		}
	}
	return i
}

// unescape appends the value of the JSON string body raw to dst, as
// encoding/json decodes it, when raw is valid UTF-8 without control
// characters and its escapes are valid and not surrogates; it reports
// false for anything else.
func unescape(dst, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c < 0x20 {
			return dst, false
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				return dst, false
			}
			dst = append(dst, raw[i:i+size]...)
			i += size - 1
			continue
		}
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		if i++; i == len(raw) {
			return dst, false
		}
		switch raw[i] {
		case '"', '\\', '/':
			dst = append(dst, raw[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			if i+4 >= len(raw) {
				return dst, false
			}
			var r rune
			for _, h := range raw[i+1 : i+5] {
				switch {
				case '0' <= h && h <= '9':
					h -= '0'
				case 'a' <= h && h <= 'f':
					h -= 'a' - 10
				case 'A' <= h && h <= 'F':
					h -= 'A' - 10
				default:
					return dst, false
				}
				r = r<<4 | rune(h)
			}
			if utf16.IsSurrogate(r) {
				return dst, false
			}
			dst = utf8.AppendRune(dst, r)
			i += 4
		default:
			return dst, false
		}
	}
	return dst, true
}

// skip skips one value.
func (s *scanner) skip() bool {
	switch s.peek() {
	case '"':
		_, ok := s.skipStr()
		return ok
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, ok := s.skipStr(); !ok {
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
