package skills

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// CatalogMaxResults is the most skills a keyword or "+" search returns
// (DeerFlow's MAX_RESULTS); "select:" is uncapped.
const CatalogMaxResults = 5

// maxCatalogQuery bounds the query a search compiles and splits, in
// bytes; the rest is ignored.
const maxCatalogQuery = 1000

// Catalog is the searchable list of skills behind deferred skill
// discovery (skills.deferred_discovery): the system prompt names the
// skills and describe_skill searches this for their metadata. It is
// immutable.
type Catalog struct {
	skills []Skill
}

// NewCatalog returns a catalogue of the enabled skills of all that
// allowed permits (nil: every one).
func NewCatalog(all []Skill, allowed []string) *Catalog {
	c := &Catalog{}
	for _, s := range all {
		if s.Enabled && (allowed == nil || slices.Contains(allowed, s.Name)) {
			c.skills = append(c.skills, s)
		}
	}
	return c
}

// Names returns the skill names, sorted.
func (c *Catalog) Names() []string {
	out := make([]string, len(c.skills))
	for i, s := range c.skills {
		out[i] = s.Name
	}
	slices.Sort(out)
	return out
}

// Search answers a describe_skill query, in DeerFlow's forms:
//
//   - "select:a,b" returns exactly the named skills, in catalogue order;
//   - "+kw rest" returns the skills whose lowercased name contains kw,
//     ranked by how often rest (a case-insensitive regular expression,
//     a literal when it is not a valid one) matches name and description;
//   - anything else returns the skills whose "name description" matches
//     the query as such a regular expression, name matches first, and
//     then (Antler's addition, as tool_search does for tools) the skills
//     sharing words with the query, most shared words first, so that a
//     natural query in any word order finds them.
//
// Keyword and "+" searches return at most CatalogMaxResults skills; a
// blank query and a bare "+" return none.
func (c *Catalog) Search(query string) []Skill {
	query = strings.TrimSpace(query)
	if len(query) > maxCatalogQuery {
		query = query[:maxCatalogQuery]
	}
	switch {
	case query == "":
		return nil
	case strings.HasPrefix(query, "select:"):
		return c.selectNames(query[len("select:"):])
	case strings.HasPrefix(query, "+"):
		return c.required(query[1:])
	}
	return c.ranked(query)
}

func (c *Catalog) selectNames(list string) []Skill {
	var want []string
	for n := range strings.SplitSeq(list, ",") {
		want = append(want, strings.TrimSpace(n))
	}
	var out []Skill
	for _, s := range c.skills {
		if slices.Contains(want, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

func (c *Catalog) required(rest string) []Skill {
	parts := strings.Fields(rest)
	if len(parts) == 0 {
		return nil
	}
	kw := strings.ToLower(parts[0])
	var out []Skill
	for _, s := range c.skills {
		if strings.Contains(strings.ToLower(s.Name), kw) {
			out = append(out, s)
		}
	}
	if len(parts) > 1 {
		re := compileQuery(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), parts[0])))
		slices.SortStableFunc(out, func(a, b Skill) int {
			return cmp.Compare(len(re.FindAllStringIndex(searchable(b), -1)), len(re.FindAllStringIndex(searchable(a), -1)))
		})
	}
	return out[:min(len(out), CatalogMaxResults)]
}

func (c *Catalog) ranked(query string) []Skill {
	re := compileQuery(query)
	type hit struct {
		s     Skill
		score int
	}
	var regexHits, wordHits []hit
	words := queryWords(query)
	for _, s := range c.skills {
		switch {
		case re.MatchString(s.Name):
			regexHits = append(regexHits, hit{s, 2})
		case re.MatchString(searchable(s)):
			regexHits = append(regexHits, hit{s, 1})
		default:
			if n := sharedWords(words, s); n > 0 {
				wordHits = append(wordHits, hit{s, n})
			}
		}
	}
	byScore := func(a, b hit) int { return cmp.Compare(b.score, a.score) }
	slices.SortStableFunc(regexHits, byScore)
	slices.SortStableFunc(wordHits, byScore)
	var out []Skill
	for _, h := range slices.Concat(regexHits, wordHits) {
		if len(out) == CatalogMaxResults {
			break
		}
		out = append(out, h.s)
	}
	return out
}

// searchable is the text a query is matched against.
func searchable(s Skill) string { return s.Name + " " + s.Description }

// compileQuery compiles q case-insensitively, or as a literal when it is
// not a valid RE2 expression (a query comes from the model).
func compileQuery(q string) *regexp.Regexp {
	if re, err := regexp.Compile("(?i)" + q); err == nil {
		return re
	}
	return regexp.MustCompile("(?i)" + regexp.QuoteMeta(q))
}

// queryWords returns the distinct lowercased words of q of at least three
// letters or digits (shorter ones match too much to rank by).
func queryWords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), notWordRune) {
		if len([]rune(w)) >= 3 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// sharedWords counts the query words that start a word of the skill's
// name or description ("chart" finds "charts", "visual" finds
// "visualization").
func sharedWords(words []string, s Skill) int {
	text := strings.FieldsFunc(strings.ToLower(searchable(s)), notWordRune)
	n := 0
	for _, w := range words {
		if slices.ContainsFunc(text, func(t string) bool { return strings.HasPrefix(t, w) }) {
			n++
		}
	}
	return n
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
