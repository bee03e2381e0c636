package search

import (
	"strings"
	"testing"

	"github.com/kljensen/snowball/english"
)

// stemWord uses the Snowball project's generated stemmer, while the
// generators of derivations.txt (and the stop list) use kljensen's port
// of the same algorithm: the two must give the same stems, or the
// embedded derivations would stop matching the index's terms. The words
// are those of the embedded data files and their usual inflections.
func TestStemmersAgree(t *testing.T) {
	words := map[string]bool{}
	add := func(text string) {
		for line := range strings.Lines(text) {
			if strings.HasPrefix(line, "#") {
				continue
			}
			for _, w := range strings.Fields(line) {
				if isLetters(w) && len(w) > 2 {
					words[w] = true
				}
			}
		}
	}
	add(lexiconText)
	add(cedictText) // English gloss words (the Chinese keys are not letters)
	suffixes := []string{"", "s", "ed", "ing", "ly", "ation"}
	n, diff := 0, 0
	for w := range words {
		for _, s := range suffixes {
			n++
			if got, want := stemWord(w+s), english.Stem(w+s, true); got != want {
				if diff++; diff <= 10 {
					t.Errorf("stem(%q) = %q, kljensen/snowball gives %q", w+s, got, want)
				}
			}
		}
	}
	if n < 50000 {
		t.Errorf("only %d words compared", n)
	}
	if diff > 0 {
		t.Errorf("%d of %d words stem differently", diff, n)
	}
}

// BenchmarkStem compares stemWord with kljensen/snowball on the gloss
// words of cedict.txt (every distinct word of a catalogue is stemmed
// once per build).
func BenchmarkStem(b *testing.B) {
	var words []string
	seen := map[string]bool{}
	for line := range strings.Lines(newSortedLines(cedictText).text) {
		for _, w := range strings.Fields(line)[1:] {
			if !seen[w] && len(w) > 2 {
				seen[w] = true
				words = append(words, w)
			}
		}
	}
	b.Run("antler", func(b *testing.B) {
		for b.Loop() {
			for _, w := range words {
				stemWord(w)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(words)), "ns/word")
	})
	b.Run("kljensen", func(b *testing.B) {
		for b.Loop() {
			for _, w := range words {
				english.Stem(w, true)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(words)), "ns/word")
	})
}
