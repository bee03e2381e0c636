package toolpolicy

import (
	"strings"
	"unicode/utf8"
)

// glob reports whether s matches pattern: "*" matches any run of
// characters (spaces and slashes included), "?" one character, and "\"
// makes the next character literal. The empty pattern matches only "".
// It runs in O(len(pattern)·len(s)) and never allocates.
func glob(pattern, s string) bool {
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		if p < len(pattern) {
			c, n := utf8.DecodeRuneInString(pattern[p:])
			switch c {
			case '*':
				starP, starI = p+n, i
				p += n
				continue
			case '?':
				_, m := utf8.DecodeRuneInString(s[i:])
				p, i = p+n, i+m
				continue
			case '\\':
				if p+n < len(pattern) {
					p += n
					c, n = utf8.DecodeRuneInString(pattern[p:])
				}
			}
			if sc, m := utf8.DecodeRuneInString(s[i:]); sc == c {
				p, i = p+n, i+m
				continue
			}
		}
		if starP < 0 {
			return false
		}
		_, m := utf8.DecodeRuneInString(s[starI:])
		starI += m
		p, i = starP, starI
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// commandPattern is a tool_policy command pattern: a glob on the words of
// one command joined by single spaces. A trailing " *" (or Claude Code's
// ":*") also matches the command with no more words, so "curl *" matches
// "curl" and "curl -s x", and "git push:*" matches "git push" and
// "git push origin main".
type commandPattern struct {
	full string // the whole pattern
	bare string // the pattern without its trailing " *" ("" for none)
}

func newCommandPattern(p string) commandPattern {
	p = strings.Join(strings.Fields(p), " ")
	if base, ok := strings.CutSuffix(p, ":*"); ok && !strings.HasSuffix(base, `\`) {
		p = strings.TrimSpace(base) + " *"
	}
	cp := commandPattern{full: p}
	if base, ok := strings.CutSuffix(p, " *"); ok {
		cp.bare = base
	}
	return cp
}

func (cp commandPattern) match(words string) bool {
	return glob(cp.full, words) || cp.bare != "" && glob(cp.bare, words)
}
