package search

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
)

func TestExpansion(t *testing.T) {
	// Terms 0..4; documents 0..2 hold them with these pseudo term
	// frequencies.
	forward := [][]posting{
		{{doc: 0, tf: 1}, {doc: 1, tf: 3}},                  // doc 0: mostly term 1
		{{doc: 0, tf: 1}, {doc: 2, tf: 1}, {doc: 3, tf: 2}}, // doc 1
		{{doc: 4, tf: 5}},                                   // doc 2
	}
	flat := []float32{1, 1, 1, 1, 1}
	query := [][]qterm{{{id: 0, weight: 1}}}
	approx := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })
	tests := []struct {
		name  string
		idf   []float32
		top   []scored
		opt   RM3
		query [][]qterm
		want  [][]qterm
	}{
		{
			name: "one document: its terms by share, query term left out",
			idf:  flat, top: []scored{{doc: 0, score: 2}}, opt: RM3{Docs: 1, Terms: 5, Weight: 0.5}, query: query,
			want: [][]qterm{{{id: 1, weight: 0.5}}},
		},
		{
			name: "documents weigh by their share of the top scores",
			idf:  flat, top: []scored{{doc: 0, score: 3}, {doc: 1, score: 1}}, opt: RM3{Docs: 2, Terms: 5, Weight: 0.5},
			query: query,
			// term 1: 3/4·3/4 = 9/16; term 3: 1/4·2/4 = 2/16; term 2: 1/4·1/4 = 1/16
			want: [][]qterm{{{id: 1, weight: 0.5}}, {{id: 3, weight: 0.5 * 2 / 9}}, {{id: 2, weight: 0.5 * 1 / 9}}},
		},
		{
			name: "at most Terms terms",
			idf:  flat, top: []scored{{doc: 0, score: 3}, {doc: 1, score: 1}}, opt: RM3{Docs: 2, Terms: 1, Weight: 0.3},
			query: query,
			want:  [][]qterm{{{id: 1, weight: 0.3}}},
		},
		{
			name: "IDF favours the rarer term",
			idf:  []float32{1, 0.1, 1, 1, 1}, top: []scored{{doc: 0, score: 3}, {doc: 1, score: 1}}, opt: RM3{Docs: 2, Terms: 2, Weight: 0.5},
			query: query,
			// term 1: 9/16·0.1 = 0.9/16; term 3: 2/16
			want: [][]qterm{{{id: 3, weight: 0.5}}, {{id: 2, weight: 0.5 * 1 / 2}}},
		},
		{
			name: "every term already in the query",
			idf:  flat, top: []scored{{doc: 2, score: 1}}, opt: RM3{Docs: 1, Terms: 5, Weight: 0.5},
			query: [][]qterm{{{id: 4, weight: 1}}},
			want:  [][]qterm{},
		},
		{
			name: "no results",
			idf:  flat, opt: RM3{Docs: 3, Terms: 5, Weight: 0.5}, query: query,
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := expansion(forward, tt.idf, tt.top, tt.query, tt.opt)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(qterm{}), approx); diff != "" {
				t.Errorf("expansion (-want +got):\n%s", diff)
			}
		})
	}
}

func TestForwardIndex(t *testing.T) {
	postings := [][]posting{{{doc: 1, tf: 2}}, {{doc: 0, tf: 1}, {doc: 1, tf: 3}}}
	want := [][]posting{{{doc: 1, tf: 1}}, {{doc: 0, tf: 2}, {doc: 1, tf: 3}}}
	if diff := cmp.Diff(want, forwardIndex(postings, 2), cmp.AllowUnexported(posting{})); diff != "" {
		t.Errorf("forwardIndex (-want +got):\n%s", diff)
	}
}

// TestRM3Search: a query whose words only reach one tool finds, through
// that tool's other words, a second tool that shares none of the query's.
func TestRM3Search(t *testing.T) {
	tools := []*tool.Tool{
		testTool("a", "zebra_photos", "Photos of zebra stripes and savanna animals."),
		testTool("b", "savanna_guide", "A guide to savanna animals and their stripes."),
		testTool("c", "send_mail", "Send an email message."),
	}
	ix, err := BuildWith(tools, Options{RM3: RM3{Docs: 1, Terms: 3, Weight: 0.5}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain := Build(tools, nil)
	names := func(ts []*tool.Tool) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return out
	}
	if diff := cmp.Diff([]string{"zebra_photos"}, names(plain.Search("zebra", 5))); diff != "" {
		t.Errorf("without RM3 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"zebra_photos", "savanna_guide"}, names(ix.Search("zebra", 5))); diff != "" {
		t.Errorf("with RM3 (-want +got):\n%s", diff)
	}
}
