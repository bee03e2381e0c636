package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestRunTable checks the run table against a map, with keys that share
// their first eight bytes and length, keys that are prefixes of others,
// and a hash that makes every key collide.
func TestRunTable(t *testing.T) {
	var keys []string
	for i := range 3000 {
		keys = append(keys,
			fmt.Sprintf("w%d", i),
			fmt.Sprintf("abcdefgh%dxyz", i), // same first eight bytes
			fmt.Sprintf("abcdefgh%d", i),    // a prefix of the one before
			fmt.Sprintf("x%07d", i),         // exactly eight bytes
		)
	}
	for _, collide := range []bool{false, true} {
		t.Run(fmt.Sprintf("collide=%v", collide), func(t *testing.T) {
			n := len(keys)
			if collide {
				n = 200 // every probe walks the whole cluster
			}
			var tab runTable
			tab.init(16)
			want := make(map[string]rawRun)
			hash := func(s string) (uint64, uint32) {
				p, h := hashRun(s)
				if collide {
					h = 7
				}
				return p, h
			}
			for i, k := range keys[:n] {
				p, h := hash(k)
				if _, ok := get(&tab, k, p, h); ok {
					t.Fatalf("get(%q) found a key not added", k)
				}
				v := rawRun{runs: int32(i), start: int32(i + 1), end: int32(i + 2)}
				put(&tab, []byte(k), p, h, v)
				want[k] = v
			}
			for k, v := range want {
				p, h := hash(k)
				if got, ok := get(&tab, []byte(k), p, h); !ok || got != v {
					t.Errorf("get(%q) = %v, %v; want %v", k, got, ok, v)
				}
			}
		})
	}
}

// FuzzAnalyse checks the analyser against the plain tokeniser: the same
// terms as splitWords, stop words and stemming give, and the same
// lowercased ASCII letter/digit runs recorded for the regex index,
// whether the text is read as a string or as bytes, and when its runs
// were already seen.
func FuzzAnalyse(f *testing.F) {
	for _, s := range []string{"getFileInfo HTMLParser", "café123 naïve_Über", "读取文件 read_file", "x", "the a of", "ABCdefGHIjklMNOpqrSTU_vwxyz0123456789", "\xff\xfe abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ix := &Index{terms: map[string]int32{}, words: map[string]int32{}, runIDs: map[string]int32{}}
		a := &analyzer{ix: ix}
		a.raw.init(16)
		st := &stemmer{cache: map[string]string{}}
		want := st.terms(nil, s)
		var wantRuns []string
		for _, r := range literalRuns(s) {
			if !slices.Contains(wantRuns, strings.ToLower(r.text)) {
				wantRuns = append(wantRuns, strings.ToLower(r.text))
			}
		}
		for doc, bytes := range []bool{false, true, false} {
			var ids []int32
			if bytes {
				ids = analyse(a, nil, []byte(s), int32(doc))
			} else {
				ids = a.terms(nil, s, int32(doc))
			}
			got := []string{}
			for _, id := range ids {
				got = append(got, ix.termStr[id])
			}
			if diff := cmp.Diff(append([]string{}, want...), got); diff != "" {
				t.Fatalf("analyse(%q) #%d terms (-tokeniser +analyser):\n%s", s, doc, diff)
			}
		}
		ix.runDocs = a.runDocs()
		var gotRuns []string
		for id, r := range ix.runList {
			if !cmp.Equal(ix.runDocs[id], []int32{0, 1, 2}) {
				t.Errorf("run %q in documents %v, want 0, 1, 2", r, ix.runDocs[id])
			}
			gotRuns = append(gotRuns, r)
		}
		slices.Sort(wantRuns)
		slices.Sort(gotRuns)
		if diff := cmp.Diff(wantRuns, gotRuns, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("analyse(%q) runs (-want +got):\n%s", s, diff)
		}
	})
}
