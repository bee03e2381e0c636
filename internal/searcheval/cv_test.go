package searcheval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/antlerhq/antler/deferred"
)

// outs builds outcomes with one gold tool each: found[i] tells whether
// query i found it.
func outs(found ...int) []Outcome {
	o := make([]Outcome, len(found))
	for i, f := range found {
		o[i] = Outcome{Golds: 1, Found: f}
		if f > 0 {
			o[i].RR = 1
		}
	}
	return o
}

func TestChoose(t *testing.T) {
	// Four queries in folds 0, 0, 1, 2.
	c := &CV{Fold: []int{0, 0, 1, 2}, Folds: 3, Objective: "recall"}
	base := outs(1, 0, 1, 1)
	lex := []variant{
		{element: "lexicon 1", outs: outs(1, 0, 1, 1)}, // neutral
		{element: "lexicon 2", outs: outs(1, 1, 1, 1)}, // dropping it gains (fold 0)
		{element: "lexicon 3", outs: outs(1, 0, 0, 1)}, // dropping it loses (fold 1)
	}
	def, _ := deferred.DefaultSearchParam("k1")
	params := []variant{
		{element: "k1", value: 0.6, outs: outs(1, 0, 1, 1)}, // ties the shipped value
		{element: "k1", value: 2.0, outs: outs(1, 1, 1, 0)}, // gains fold 0, loses fold 2
	}
	tests := []struct {
		name       string
		strict     bool
		in         func(int) bool
		wantDrop   []int
		wantParams map[string]float64
	}{
		{"lenient, whole set: drop what gains, keep the neutral", false, all, []int{2}, nil},
		{"strict, whole set: keep only what loses when dropped", true, all, []int{1, 2}, nil},
		{"lenient, fold 1 held out: group 2 gains, k1 2.0 ties 1.2 → shipped", false, c.outOfFold(1), []int{2}, nil},
		{"lenient, fold 2 held out: group 3 kept (dropping it loses), k1 2.0 gains", false, c.outOfFold(2), []int{2}, map[string]float64{"k1": 2.0}},
		{"strict, fold 1 held out: group 3 untouched is dropped", true, c.outOfFold(1), []int{1, 2, 3}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, chosen := c.choose(tt.strict, base, lex, params, tt.in)
			want := deferred.SearchOptions{DropLexicon: tt.wantDrop, Params: tt.wantParams}
			if diff := cmp.Diff(want, o, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("choose (-want +got):\n%s", diff)
			}
			if v := chosen["k1"]; tt.wantParams == nil && v != def {
				t.Errorf("k1 chosen %v, want the shipped %v", v, def)
			}
		})
	}
}

func TestTallyCount(t *testing.T) {
	var tl Tally
	for _, o := range []Outcome{{Golds: 3, Found: 2, RR: 0.5}, {Golds: 1}, {Golds: 2, Found: 1, RR: 1}} {
		tl.add(o)
	}
	want := Tally{Queries: 3, Golds: 6, Found: 3, Hits: 2, RR: 1.5}
	if diff := cmp.Diff(want, tl); diff != "" {
		t.Errorf("tally (-want +got):\n%s", diff)
	}
	if tl.count("recall") != 3 || tl.count("hit") != 2 {
		t.Errorf("count: recall %d hit %d, want 3 and 2", tl.count("recall"), tl.count("hit"))
	}
}

// TestLexiconVariantsRerunOnlyTouched: re-running only the queries that
// hold a word of a group gives what re-running every query gives.
func TestLexiconVariantsRerunOnlyTouched(t *testing.T) {
	tools, ids := Tools([]Entry{
		{ID: "shop/fetch_price", Server: "shop", Name: "fetch_price", Description: "Price of a product."},
		{ID: "docs/list_files", Server: "docs", Name: "list_files", Description: "Enumerate the documents of a folder."},
		{ID: "img/make_picture", Server: "img", Name: "make_picture", Description: "Draw a photo."},
		{ID: "web/lookup", Server: "web", Name: "lookup", Description: "Search the web."},
	})
	queries := []Query{
		{Query: "get the price of a phone", GoldIDs: []string{"shop/fetch_price"}},
		{Query: "show me my files", GoldIDs: []string{"docs/list_files"}},
		{Query: "create an image of a cat", GoldIDs: []string{"img/make_picture"}},
		{Query: "find pages about zebras", GoldIDs: []string{"web/lookup"}},
	}
	c := &CV{Tools: tools, IDs: ids, Queries: queries, Fold: []int{0, 1, 0, 1}, Folds: 2, K: 1, Objective: "recall"}
	base, err := c.run(deferred.SearchOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := c.lexiconVariants(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(deferred.SearchLexiconGroups()) {
		t.Fatalf("%d variants for %d groups", len(vs), len(deferred.SearchLexiconGroups()))
	}
	changed := 0
	for g, v := range vs {
		full, err := c.run(deferred.SearchOptions{DropLexicon: []int{g + 1}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(full, v.outs); diff != "" {
			t.Errorf("group %d: touched-only re-run differs from a full one (-full +touched):\n%s", g+1, diff)
		}
		if !cmp.Equal(base, v.outs) {
			changed++
		}
	}
	if changed == 0 {
		t.Error("no group changed any outcome: the catalogue does not exercise the lexicon")
	}
}
