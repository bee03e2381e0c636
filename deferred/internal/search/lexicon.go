package search

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

//go:embed lexicon.txt
var lexiconText string

// synonyms maps each stemmed lexicon word to the other stemmed words of
// its groups. It depends on no catalogue, so it is built once per
// process, on first use, and shared (read-only) by every index.
var synonyms = sync.OnceValue(func() map[string][]string {
	return buildSynonyms(&stemmer{cache: make(map[string]string)})
})

// buildSynonyms builds the synonym table of lexicon.txt.
func buildSynonyms(st *stemmer) map[string][]string {
	return buildSynonymsExcept(st, nil)
}

// buildSynonymsExcept builds the synonym table of lexicon.txt without
// the groups numbered in drop (see [Options.DropLexicon]).
func buildSynonymsExcept(st *stemmer, drop []int) map[string][]string {
	out := make(map[string][]string)
	n := 0
	for line := range strings.Lines(lexiconText) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		n++
		if slices.Contains(drop, n) {
			continue
		}
		var group []string
		for _, w := range strings.Fields(line) {
			s := st.stem(w)
			dup := false
			for _, g := range group {
				dup = dup || g == s
			}
			if !dup {
				group = append(group, s)
			}
		}
		for _, a := range group {
			for _, b := range group {
				if a != b {
					out[a] = appendUnique(out[a], b)
				}
			}
		}
	}
	return out
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
