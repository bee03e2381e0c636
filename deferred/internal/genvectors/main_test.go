package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/antlerhq/antler/deferred/internal/search"
	"github.com/google/go-cmp/cmp"
)

func TestReadDescriptions(t *testing.T) {
	const translation = `Package: foo
Description-md5: 0
Description-en: Mail reader for the terminal
 A fast mail reader.
 .
 It reads mailboxes.

Package: foo-doc
Description-md5: 1
Description-en: Mail reader for the terminal (documentation)
 A fast mail reader.
 .
 This package holds the manual.
`
	c := newCorpus()
	if err := c.readDescriptions(search.NewAnalyzer(), strings.NewReader(translation)); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"mail", "reader", "termin"},
		{"fast", "mail", "reader"},
		{"read", "mailbox"},
		{"mail", "reader", "termin", "document"},
		// The repeated paragraph is taken once.
		{"packag", "hold", "manual"},
	}
	if diff := cmp.Diff(want, c.units); diff != "" {
		t.Errorf("units (-want +got):\n%s", diff)
	}
}

func TestWordnetSynset(t *testing.T) {
	tests := []struct {
		name, line string
		words      []string
		gloss      string
		err        string
	}{
		{"noun", `06642138 10 n 02 forecast 0 prognosis 0 001 @ 06642672 n 0000 | a prediction about how something will develop`,
			[]string{"forecast", "prognosis"}, "a prediction about how something will develop", ""},
		{"multi-word and adjective marker", `00001740 00 a 02 able(a) 0 well_able 0 000 | having the means`,
			[]string{"able", "well able"}, "having the means", ""},
		{"no gloss", `00001740 00 a 01 able 0 000`, nil, "", "no gloss"},
		{"bad count", `00001740 00 a zz able 0 000 | x`, nil, "", "word count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			words, gloss, err := wordnetSynset(tc.line)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.words, words); diff != "" || gloss != tc.gloss {
				t.Errorf("words (-want +got):\n%s\ngloss %q, want %q", diff, gloss, tc.gloss)
			}
		})
	}
}

// syntheticUnits is a corpus of n sentences drawn from three topics, the
// same for the same n.
func syntheticUnits(n int) [][]string {
	topics := [][]string{
		{"mail", "inbox", "sender", "spam", "imap", "smtp", "messag", "attach"},
		{"planet", "orbit", "comet", "star", "galaxi", "telescop", "moon", "solar"},
		{"git", "commit", "branch", "merg", "repositori", "patch", "diff", "rebas"},
	}
	rng := splitmix{state: 7}
	units := make([][]string, n)
	for i := range units {
		topic := topics[rng.next()%uint64(len(topics))]
		for range 6 {
			units[i] = append(units[i], topic[rng.next()%uint64(len(topic))])
		}
	}
	return units
}

// TestTrain_reproducible checks that a table depends only on its
// corpus and settings, not on the number of workers, and that it has
// learnt the topics.
func TestTrain_reproducible(t *testing.T) {
	units := syntheticUnits(3000)
	o := defaultOptions()
	o.minCount, o.dims, o.oversample = 2, 4, 4
	var tables [][]byte
	for _, workers := range []int{1, 3} {
		o.workers = workers
		table, err := train(units, o)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, table)
	}
	if !bytes.Equal(tables[0], tables[1]) {
		t.Fatal("one worker and three workers wrote different tables")
	}
	head, _, _ := bytes.Cut(tables[0], []byte("\n"))
	if want := fmt.Sprintf("antler-word-vectors 1 24 4 min-count=2 max-words=%d", o.maxWords); !strings.HasPrefix(string(head), want) {
		t.Errorf("header %q, want it to start with %q", head, want)
	}
	vec := func(w string) []int8 {
		words := strings.Split(string(tables[0][len(head)+1:]), "\n")[:24]
		for i, x := range words {
			if x == w {
				raw := tables[0][len(tables[0])-24*4+i*4:][:4]
				return []int8{int8(raw[0]), int8(raw[1]), int8(raw[2]), int8(raw[3])}
			}
		}
		t.Fatalf("no vector for %q", w)
		return nil
	}
	dot := func(a, b []int8) int {
		s := 0
		for i := range a {
			s += int(a[i]) * int(b[i])
		}
		return s
	}
	if same, other := dot(vec("inbox"), vec("spam")), dot(vec("inbox"), vec("comet")); same <= other {
		t.Errorf("inbox·spam = %d, not above inbox·comet = %d", same, other)
	}
}

// TestShippedTableMatchesDefaults checks that the shipped table was
// written with the generator's default settings, which scripts/genvectors
// uses: a default changed without regenerating the table fails here.
func TestShippedTableMatchesDefaults(t *testing.T) {
	data, err := os.ReadFile("../search/vectors.bin")
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := bytes.Cut(data, []byte("\n"))
	o := defaultOptions()
	table := encodeTable(nil, nil, o)
	want := strings.TrimSuffix(strings.Replace(string(table), " 0 ", " ", 1), "\n")
	// want is the header of an empty table: drop the word count from both.
	f := strings.Fields(string(head))
	if len(f) < 3 {
		t.Fatalf("shipped header %q is too short", head)
	}
	got := strings.Join(append(f[:2:2], f[3:]...), " ")
	if got != want {
		t.Errorf("shipped table header (word count left out)\n  %s\nwant, from the generator's defaults,\n  %s\n(run scripts/genvectors)", got, want)
	}
}
