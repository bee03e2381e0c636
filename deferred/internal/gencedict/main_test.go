package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGlossWords(t *testing.T) {
	tests := []struct {
		name   string
		senses []string
		want   []string
	}{
		{"one sense", []string{"news"}, []string{"news"}},
		{"two senses, stop words dropped", []string{"to recommend", "recommendation"}, []string{"recommend", "recommendation"}},
		{"first two glosses of a sense", []string{"to assemble; to combine; to compose"}, []string{"assemble", "combine"}},
		{"notes and references dropped", []string{"(literary) to storm and capture", "strategy; directions; guide"}, []string{"strategy", "directions"}},
		{"parenthesised and bracketed text dropped", []string{"menu (in restaurant)", "recipe 菜谱[cai4 pu3]"}, []string{"menu", "recipe"}},
		{"surname and variant senses skipped", []string{"surname Li", "variant of 李", "plum"}, []string{"plum"}},
		{"only the first two senses count", []string{"a", "b c", "third", "fourth"}, nil},
		{"gloss noise dropped", []string{"to do sth for sb"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, glossWords(tt.senses)); diff != "" {
				t.Errorf("glossWords(%q) (-want +got):\n%s", tt.senses, diff)
			}
		})
	}
}

// TestRun writes the file of a small dictionary in the package's format:
// simplified words only, proper names and one-character words left out,
// the senses of a word's entries merged, lines sorted.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "all.js")
	data := `export default {"all":[` +
		`["蘋果","苹果","Ping2 guo3","Apple (American tech company)",[],[]],` +
		`["蘋果","苹果","ping2 guo3","apple",[],[]],` +
		`["新聞","新闻","xin1 wen2","news",[],[]],` +
		`["人","人","ren2",["person","people"],[],[]],` +
		`["天氣預報","天气预报","tian1 qi4 yu4 bao4","weather forecast",[],[]],` +
		`["組合","组合","zu3 he2",["to assemble; to combine","combination"],[],[]]` +
		`]};`
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "cedict.txt")
	if err := run(in, out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(string(got), header)
	want := "天气预报 weather forecast\n新闻 news\n组合 assemble combine combination\n苹果 apple\n"
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("cedict.txt (-want +got):\n%s", diff)
	}
}

func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "all.js")
	if err := os.WriteFile(in, []byte(`export default {"all":[["x"]]};`), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(in, filepath.Join(dir, "out.txt"))
	if err == nil || !strings.Contains(err.Error(), "entry 0") {
		t.Errorf("run = %v, want an error naming entry 0", err)
	}
}
