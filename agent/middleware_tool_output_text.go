package agent

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the text helpers of the tool-output budget. DeerFlow
// measures and slices Python str values, so every length and offset here
// counts characters (runes; an invalid byte counts as one), and
// whitespace, line breaks and the regular-expression classes follow
// Python's definitions rather than Go's ASCII ones.

// pyWS is the character class of Python's str.isspace (and of \s in a
// Python str pattern), for use inside brackets in a Go regular
// expression.
const pyWS = `\t\n\v\f\r \x{1c}-\x{1f}\x{85}\p{Z}`

// pyWord is the character class of \w in a Python str pattern.
const pyWord = `\p{L}\p{N}_`

// pyIsSpace is Python's str.isspace for one character.
func pyIsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x1c, 0x1d, 0x1e, 0x1f, 0x85:
		return true
	}
	return r > 0x7f && unicode.Is(unicode.Z, r)
}

// pyStrip is Python's str.strip().
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// charLen is Python's len of s.
func charLen(s string) int { return utf8.RuneCountInString(s) }

// charOffset returns the byte offset of character n of s (len(s) when n
// is at or past the end; 0 when n <= 0).
func charOffset(s string, n int) int {
	if n <= 0 {
		return 0
	}
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// charSlice is Python's s[from:to] for 0 <= from <= to.
func charSlice(s string, from, to int) string {
	start := charOffset(s, from)
	return s[start : start+charOffset(s[start:], to-from)]
}

// charPrefix is Python's s[:n].
func charPrefix(s string, n int) string { return s[:charOffset(s, n)] }

// charSuffix is Python's s[-n:] for n > 0 (all of s when shorter).
func charSuffix(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// pyClip is DeerFlow's _clip: value cut to limit characters, the last
// three replaced by "..." when it was longer.
func pyClip(value string, limit int) string {
	if limit <= 0 {
		return ""
	}
	if charLen(value) <= limit {
		return value
	}
	return charPrefix(value, max(0, limit-3)) + "..."
}

// oneLine is DeerFlow's _one_line: runs of whitespace become one space,
// the ends are stripped, the result is clipped to limit.
func oneLine(value string, limit int) string {
	var b strings.Builder
	space := false
	for _, r := range value {
		if pyIsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return pyClip(b.String(), limit)
}

// wordCount is len(re.sub(r"\s+", " ", s).strip().split()).
func wordCount(s string) int {
	n, in := 0, false
	for _, r := range s {
		if pyIsSpace(r) {
			in = false
		} else if !in {
			in, n = true, n+1
		}
	}
	return n
}

// splitLines is Python's str.splitlines(): the lines of s without their
// line breaks, which are \n, \r, \r\n, \v, \f, \x1c, \x1d, \x1e, \x85,
// U+2028 and U+2029; a final break does not start an empty line.
func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			lines = append(lines, s[start:i])
			start = i + size
		case '\r':
			lines = append(lines, s[start:i])
			if i+1 < len(s) && s[i+1] == '\n' {
				size++
			}
			start = i + size
		}
		i += size
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// pyIsUpper is Python's str.isupper(): at least one cased character, and
// no lower-case or title-case one.
func pyIsUpper(s string) bool {
	cased := false
	for _, r := range s {
		switch {
		case unicode.IsLower(r), unicode.IsTitle(r):
			return false
		case unicode.IsUpper(r):
			cased = true
		}
	}
	return cased
}

// pyDumpsString is json.dumps(s, ensure_ascii=False).
func pyDumpsString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				const hex = "0123456789abcdef"
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&0xf])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
