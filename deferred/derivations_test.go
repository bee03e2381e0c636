package deferred

import (
	"slices"
	"strings"
	"testing"
)

// eachDerivation binary-searches the embedded file: its data lines must be
// sorted by stem, unique, and hold at least one related stem each.
func TestDerivationsFileIsSortedAndWellFormed(t *testing.T) {
	var keys []string
	for _, off := range derivationLines() {
		f := strings.Fields(lineAt(off))
		if len(f) < 2 {
			t.Fatalf("line %q: want a stem and at least one related stem", lineAt(off))
		}
		keys = append(keys, f[0])
	}
	if len(keys) < 1000 {
		t.Fatalf("only %d derivation lines", len(keys))
	}
	if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
		t.Error("derivations.txt is not sorted by stem with one line per stem; regenerate it with go generate ./deferred")
	}
}

func TestEachDerivation(t *testing.T) {
	firstStem, _, _ := strings.Cut(lineAt(derivationLines()[0]), " ")
	lastStem, _, _ := strings.Cut(lineAt(derivationLines()[len(derivationLines())-1]), " ")
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
