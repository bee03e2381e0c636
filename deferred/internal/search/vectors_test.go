package search

import (
	"slices"
	"strings"
	"testing"

	"github.com/antlerhq/antler/tool"
)

// cosine returns the cosine similarity of the table's vectors for the
// index terms of words a and b.
func cosine(t *testing.T, v *wordVectors, a, b string) float32 {
	t.Helper()
	ua, ub := make([]float32, v.dims), make([]float32, v.dims)
	for i, w := range []string{a, b} {
		id := v.lookup(stemWord(w))
		if id < 0 {
			t.Fatalf("%q (term %q) has no vector", w, stemWord(w))
		}
		v.unit(id, [][]float32{ua, ub}[i])
	}
	var s float32
	for k := range ua {
		s += ua[k] * ub[k]
	}
	return s
}

// TestVectorsTable checks the embedded table's shape and that it has
// learnt meaning: each word is nearer a related word than an unrelated
// one.
func TestVectorsTable(t *testing.T) {
	v, err := parseVectors(vectorsData)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.words) < 5000 || v.dims < 32 {
		t.Fatalf("table has %d words of %d dimensions, want at least 5000 of 32", len(v.words), v.dims)
	}
	tests := []struct{ word, near, far string }{
		{"email", "inbox", "telescope"},
		{"weather", "forecast", "compiler"},
		{"repository", "git", "weather"},
		{"image", "photo", "invoice"},
		{"stock", "price", "kernel"},
		{"music", "song", "database"},
		{"translate", "dictionary", "printer"},
	}
	for _, tc := range tests {
		t.Run(tc.word, func(t *testing.T) {
			near, far := cosine(t, v, tc.word, tc.near), cosine(t, v, tc.word, tc.far)
			if near <= far {
				t.Errorf("cos(%s, %s) = %.2f, not above cos(%s, %s) = %.2f", tc.word, tc.near, near, tc.word, tc.far, far)
			}
		})
	}
}

func TestParseVectors_malformed(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"no header", "", "bad header"},
		{"wrong magic", "word-vectors 1 1 2\na\nxx", "bad header"},
		{"bad sizes", "antler-word-vectors 1 x 2\n", "bad sizes"},
		{"unsorted words", "antler-word-vectors 1 2 2\nb\na\nxxxx", "out of order"},
		{"missing word", "antler-word-vectors 1 2 2\na\n", "missing"},
		{"short vectors", "antler-word-vectors 1 2 2\na\nb\nxxx", "bytes of vectors"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseVectors(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("parseVectors: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := parseVectors("antler-word-vectors 1 2 2 settings\na\nb\nxxxx"); err != nil {
		t.Fatalf("well-formed table: %v", err)
	}
}

// TestDenseScore checks that the word-vector score reorders the tools a
// query matches by meaning, and adds no tool the query does not match.
func TestDenseScore(t *testing.T) {
	tools := []*tool.Tool{
		testTool("acme", "acme_list_invoices", "List the invoices of an account."),
		testTool("acme", "acme_list_cases", "List the court cases of an attorney, with the judge and the plaintiff."),
		testTool("acme", "acme_list_objects", "List the comets, asteroids and moons in an orbit around the sun."),
	}
	lexical, err := BuildWith(tools, Options{Params: map[string]float64{"weight.dense": 0}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	shipped := Build(tools, nil)
	tests := []struct{ query, lexical, shipped string }{
		// "list" matches every tool; only the vectors know what the rest means.
		{"list my lawyer's lawsuits", "acme_list_invoices", "acme_list_cases"},
		{"list every planet", "acme_list_invoices", "acme_list_objects"},
		// Nothing matches: the vectors add no tool.
		{"weather tomorrow", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			if got := topName(lexical, tc.query); got != tc.lexical {
				t.Errorf("lexical ranker: top %q, want %q (the case no longer tests the vectors)", got, tc.lexical)
			}
			if got := topName(shipped, tc.query); got != tc.shipped {
				t.Errorf("shipped ranker: top %q, want %q", got, tc.shipped)
			}
		})
	}
}

func TestKthLargest(t *testing.T) {
	rng := uint64(1)
	next := func() float64 { rng = rng*6364136223846793005 + 1442695040888963407; return float64(rng>>40) / 16 }
	for _, n := range []int{1, 2, 3, 10, 201, 1000} {
		for _, dup := range []bool{false, true} {
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = next()
				if dup {
					vals[i] = float64(int(vals[i]) % 7)
				}
			}
			sorted := slices.Clone(vals)
			slices.Sort(sorted)
			for _, k := range []int{1, n / 2, n} {
				if k < 1 {
					continue
				}
				want := sorted[n-k]
				if got := kthLargest(slices.Clone(vals), k); got != want {
					t.Errorf("n=%d dup=%v k=%d: %v, want %v", n, dup, k, got, want)
				}
			}
		}
	}
}
