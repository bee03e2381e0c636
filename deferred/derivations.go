package deferred

import (
	_ "embed"
	"sort"
	"strings"
	"sync"
)

//go:generate go run ./internal/genderiv -wordnet /usr/share/wordnet -o derivations.txt

// derivationsText holds, one per line and sorted by stem, a word stem and
// the stems of its derivationally related forms in WordNet (convers →
// convert, analysi → analyz), which Snowball leaves apart.
//
//go:embed derivations.txt
var derivationsText string

// derivationLines is the start offset of each data line of
// derivationsText, computed once: constant data, shared by every index.
var derivationLines = sync.OnceValue(func() []int32 {
	var out []int32
	for off := 0; off < len(derivationsText); {
		end := strings.IndexByte(derivationsText[off:], '\n')
		if end < 0 {
			end = len(derivationsText) - off
		}
		if derivationsText[off] != '#' && end > 0 {
			out = append(out, int32(off))
		}
		off += end + 1
	}
	return out
})

// eachDerivation calls fn with each derivationally related stem of stem.
func eachDerivation(stem string, fn func(string)) {
	lines := derivationLines()
	key := func(i int) string {
		k, _, _ := strings.Cut(lineAt(lines[i]), " ")
		return k
	}
	i := sort.Search(len(lines), func(i int) bool { return key(i) >= stem })
	if i == len(lines) || key(i) != stem {
		return
	}
	_, rest, _ := strings.Cut(lineAt(lines[i]), " ")
	for rest != "" {
		var f string
		f, rest, _ = strings.Cut(rest, " ")
		if f != "" {
			fn(f)
		}
	}
}

// lineAt returns the line of derivationsText starting at off.
func lineAt(off int32) string {
	line, _, _ := strings.Cut(derivationsText[off:], "\n")
	return line
}
