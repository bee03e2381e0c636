package search

import (
	"slices"
	"strings"
	"testing"
)

// The embedded data files are binary-searched in place: their data lines
// must be sorted by key, one line per key, each with at least one value.
func TestDataFilesAreSortedAndWellFormed(t *testing.T) {
	tests := []struct {
		name, text, regenerate string
		minLines               int
	}{
		{"derivations.txt", derivationsText, "go generate ./deferred/internal/search (genderiv)", 1000},
		{"cedict.txt", cedictText, "go generate ./deferred/internal/search (gencedict)", 50000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var keys []string
			for line := range strings.Lines(newSortedLines(tt.text).text) {
				line = strings.TrimSuffix(line, "\n")
				f := strings.Fields(line)
				if len(f) < 2 || strings.HasPrefix(line, " ") || strings.Contains(line, "  ") {
					t.Fatalf("line %q: want a key and at least one value, single spaces", line)
				}
				keys = append(keys, f[0])
			}
			if len(keys) < tt.minLines {
				t.Fatalf("only %d lines", len(keys))
			}
			if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
				t.Errorf("not sorted by key with one line per key; regenerate it with %s", tt.regenerate)
			}
		})
	}
}

func TestSortedLinesFind(t *testing.T) {
	s := newSortedLines("# header\n# more\nb 1\nbb 2 3\nc 4\nd 5\n")
	tests := []struct {
		key, want string
		ok        bool
	}{
		{"b", "1", true},
		{"bb", "2 3", true},
		{"c", "4", true},
		{"d", "5", true},
		{"a", "", false},  // before every key
		{"e", "", false},  // after every key
		{"ba", "", false}, // between keys
		{"", "", false},
		{"# header", "", false},
	}
	for _, tt := range tests {
		got, ok := s.find(tt.key)
		if got != tt.want || ok != tt.ok {
			t.Errorf("find(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
	// No trailing newline, one line, no lines.
	for _, text := range []string{"a 1\nb 2", "b 2", ""} {
		_, ok := newSortedLines(text).find("b")
		if ok != (text != "") {
			t.Errorf("find(b) in %q = %v", text, ok)
		}
	}
}

func TestEachDerivation(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(newSortedLines(derivationsText).text), "\n")
	firstStem, _, _ := strings.Cut(lines[0], " ")
	lastStem, _, _ := strings.Cut(lines[len(lines)-1], " ")
	tests := []struct {
		name, stem string
		want       string // a stem that must be among the derivations; "" for none at all
	}{
		{"noun to verb", stemWord("conversion"), stemWord("convert")},
		{"verb to noun", stemWord("analyze"), stemWord("analysis")},
		{"first line", firstStem, "?"},
		{"last line", lastStem, "?"},
		{"unknown stem", "zzzzqx", ""},
		{"before every stem", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			eachDerivation(tt.stem, func(s string) { got = append(got, s) })
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("derivations of %q = %v, want none", tt.stem, got)
			case tt.want == "?" && len(got) == 0:
				t.Errorf("derivations of %q: none", tt.stem)
			case tt.want != "" && tt.want != "?" && !slices.Contains(got, tt.want):
				t.Errorf("derivations of %q = %v, want %q among them", tt.stem, got, tt.want)
			}
		})
	}
}
