package search

import (
	_ "embed"
	"strings"
	"sync"
)

//go:generate go run ../genderiv -wordnet /usr/share/wordnet -o derivations.txt

// derivationsText holds, one per line and sorted by stem, a word stem and
// the stems of its derivationally related forms in WordNet (convers →
// convert, analysi → analyz), which Snowball leaves apart.
//
//go:embed derivations.txt
var derivationsText string

// derivations is derivationsText as a lookup table: constant data,
// shared by every index.
var derivations = sync.OnceValue(func() *sortedLines { return newSortedLines(derivationsText) })

// eachDerivation calls fn with each derivationally related stem of stem.
func eachDerivation(stem string, fn func(string)) {
	rest, ok := derivations().find(stem)
	if !ok {
		return
	}
	for f := range strings.FieldsSeq(rest) {
		fn(f)
	}
}
