package search

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// catalogRegex is a search query compiled the way DeerFlow compiles it:
// case-insensitive, and as a literal when it is not a valid regular
// expression.
type catalogRegex struct {
	// pattern is the regular expression to match, compiled into re on
	// first use (most queries are rejected by the run index before any
	// text is matched); "" in literal mode.
	pattern string
	re      *regexp.Regexp
	// literal is the lowercased query when the query is plain text with
	// no regex syntax (the common case): matching is then a substring
	// test on lowercased text, much faster than the regex engine.
	literal string
	// required are lowercased strings every match must contain, used to
	// skip tools that cannot match; nil when none could be derived.
	required []string
}

func compileCatalogRegex(query string) *catalogRegex {
	// Invalid UTF-8 cannot be compiled, even quoted.
	query = strings.ToValidUTF8(query, "\uFFFD")
	if regexp.QuoteMeta(query) == query && isASCII(query) {
		lq := strings.ToLower(query)
		return &catalogRegex{literal: lq, required: []string{lq}}
	}
	// Parsing finds out whether the query is a valid expression (as
	// regexp.Compile would) and what literals a match needs; compiling
	// waits until some text must be matched.
	parsed, err := syntax.Parse(query, syntax.Perl|syntax.FoldCase)
	if err != nil {
		lq := strings.ToLower(query)
		if isASCII(query) {
			return &catalogRegex{literal: lq, required: []string{lq}}
		}
		return &catalogRegex{pattern: "(?i)" + regexp.QuoteMeta(query), required: []string{lq}}
	}
	cr := &catalogRegex{pattern: "(?i)" + query}
	cr.required = requiredLiterals(parsed.Simplify())
	return cr
}

// regex returns the compiled pattern. A pattern that parsed but does not
// compile (a program too large) matches as a literal, like an invalid
// one.
func (cr *catalogRegex) regex() *regexp.Regexp {
	if cr.re == nil {
		re, err := regexp.Compile(cr.pattern)
		if err != nil {
			re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(strings.TrimPrefix(cr.pattern, "(?i)")))
		}
		cr.re = re
	}
	return cr.re
}

// match reports whether s matches.
func (cr *catalogRegex) match(s string) bool {
	if cr.pattern == "" {
		return indexFoldASCII(s, cr.literal, 0) >= 0
	}
	return cr.regex().MatchString(s)
}

// count returns the number of non-overlapping matches in s, as Python's
// re.findall counts them.
func (cr *catalogRegex) count(s string) int {
	if cr.pattern == "" {
		if cr.literal == "" {
			return utf8.RuneCountInString(s) + 1
		}
		n := 0
		for i := indexFoldASCII(s, cr.literal, 0); i >= 0; i = indexFoldASCII(s, cr.literal, i+len(cr.literal)) {
			n++
		}
		return n
	}
	return len(cr.regex().FindAllStringIndex(s, -1))
}

// indexFoldASCII returns the first index ≥ from at which s contains the
// lowercase ASCII string lit, ignoring ASCII case, or -1.
func indexFoldASCII(s, lit string, from int) int {
	if lit == "" {
		return from
	}
	first := lit[0]
	for i := from; i+len(lit) <= len(s); i++ {
		if c := s[i]; c != first && !(isUpperASCII(c) && c+('a'-'A') == first) {
			continue
		}
		j := 1
		for ; j < len(lit); j++ {
			c := s[i+j]
			if isUpperASCII(c) {
				c += 'a' - 'A'
			}
			if c != lit[j] {
				break
			}
		}
		if j == len(lit) {
			return i
		}
	}
	return -1
}

// requiredLiterals returns lowercased literal strings that any match of
// re must contain.
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{strings.ToLower(string(re.Rune))}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var out []string
		var run strings.Builder
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral {
				run.WriteString(strings.ToLower(string(sub.Rune)))
				continue
			}
			if run.Len() > 0 {
				out = append(out, run.String())
				run.Reset()
			}
			out = append(out, requiredLiterals(sub)...)
		}
		if run.Len() > 0 {
			out = append(out, run.String())
		}
		return out
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// regexCandidates returns the documents that may match cr, or nil and
// false when every document must be tried. It uses the run index: a
// letter/digit run that a required literal contains with non-alphanumeric
// characters on both sides must be a whole run of the text; failing such
// a run, the longest run must be contained in some run of the text.
func (ix *Index) regexCandidates(cr *catalogRegex) ([]int32, bool) {
	var exact []string
	longest := ""
	for _, lit := range cr.required {
		if !isASCII(lit) {
			continue
		}
		runs := literalRuns(lit)
		for _, r := range runs {
			if r.interior {
				exact = append(exact, r.text)
			} else if len(r.text) > len(longest) {
				longest = r.text
			}
		}
	}
	if len(exact) > 0 {
		// Intersect the postings of the exact runs, rarest first.
		var best []int32
		for i, r := range exact {
			ps := ix.runDocsOf(r)
			if len(ps) == 0 {
				return nil, true
			}
			if i == 0 || len(ps) < len(best) {
				best = ps
			}
		}
		out := make([]int32, 0, len(best))
	doc:
		for _, d := range best {
			for _, r := range exact {
				if !containsDoc(ix.runDocsOf(r), d) {
					continue doc
				}
			}
			out = append(out, d)
		}
		return out, true
	}
	if longest == "" {
		return nil, false
	}
	mark := make([]bool, ix.n)
	for id, run := range ix.runList {
		if strings.Contains(run, longest) {
			for _, d := range ix.runDocs[id] {
				mark[d] = true
			}
		}
	}
	var out []int32
	for d, ok := range mark {
		if ok {
			out = append(out, int32(d))
		}
	}
	return out, true
}

// containsDoc reports whether the sorted postings ps hold d.
func containsDoc(ps []int32, d int32) bool {
	lo, hi := 0, len(ps)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case ps[m] == d:
			return true
		case ps[m] < d:
			lo = m + 1
		default:
			hi = m
		}
	}
	return false
}

type litRun struct {
	text     string
	interior bool // bounded by non-alphanumerics on both sides within the literal
}

func literalRuns(lit string) []litRun {
	var out []litRun
	start := -1
	for i := 0; i <= len(lit); i++ {
		alnum := i < len(lit) && isASCIIAlnum(lit[i])
		if alnum && start < 0 {
			start = i
		}
		if !alnum && start >= 0 {
			out = append(out, litRun{text: lit[start:i], interior: start > 0 && i < len(lit)})
			start = -1
		}
	}
	return out
}

// regexHits returns the documents whose "name description" matches cr,
// in catalogue order, with DeerFlow's score: 2 when the name matches, 1
// otherwise.
func (ix *Index) regexHits(cr *catalogRegex) []scored {
	cands, filtered := ix.regexCandidates(cr)
	var out []scored
	try := func(d int32) {
		if !cr.match(ix.text(d)) {
			return
		}
		s := 1.0
		if cr.match(ix.names[d]) {
			s = 2
		}
		out = append(out, scored{doc: d, score: s})
	}
	if filtered {
		for _, d := range cands {
			try(d)
		}
		return out
	}
	for d := range ix.n {
		try(int32(d))
	}
	return out
}
