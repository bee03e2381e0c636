package deferred

import (
	_ "embed"
	"strings"
	"sync"
)

//go:generate go run ./internal/genderiv -wordnet /usr/share/wordnet -o derivations.txt

//go:embed derivations.txt
var derivationsText string

// derivations maps a word stem to the stems of its derivationally related
// forms in WordNet (convers → convert, analysi → analyz), which Snowball
// leaves apart. It is constant data, parsed on first use by a query.
var derivations = sync.OnceValue(func() map[string][]string {
	out := make(map[string][]string, 11000)
	for line := range strings.Lines(derivationsText) {
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) > 1 {
			out[fields[0]] = fields[1:]
		}
	}
	return out
})
