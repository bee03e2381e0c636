package shellcmd

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wordValue returns a word with quotes and backslashes removed, and
// whether it is literal (no expansion of any kind). A word that is not
// literal is returned as its source text.
func wordValue(script string, w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				return source(script, w), false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return source(script, w), false
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return source(script, w), false
				}
				b.WriteString(unescape(lit.Value, true))
			}
		default:
			return source(script, w), false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes of an unquoted word part (each escapes
// the next character; backslash-newline disappears) or of a double-quoted
// one (only before $ ` " \ and newline).
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case !quoted || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// nameLiteral reports whether a literal command word names one command:
// no unquoted glob character and no unquoted brace (which the shell would
// expand into other words or names).
func nameLiteral(w *syntax.Word) bool {
	for _, part := range w.Parts {
		lit, ok := part.(*syntax.Lit)
		if !ok {
			continue
		}
		v := lit.Value
		for i := 0; i < len(v); i++ {
			switch v[i] {
			case '\\':
				i++
			case '*', '?', '[', '{':
				return false
			}
		}
	}
	return true
}
