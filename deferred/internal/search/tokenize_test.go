package search

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitWords(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"camelCase", "getFileInfo", []string{"get", "file", "info"}},
		{"acronym", "HTMLParser", []string{"html", "parser"}},
		{"snake and kebab", "snake_case-kebab", []string{"snake", "case", "kebab"}},
		{"words and digits", "list-component-examples v2", []string{"list", "component", "examples", "v2"}},
		{"accented camelCase", "ÉtéCafé", []string{"été", "café"}},
		{"Chinese: overlapping bigrams", "搜索结果", []string{"搜索", "索结", "结果"}},
		{"a lone ideograph", "图 and 表", []string{"图", "and", "表"}},
		{"script changes split words", "用GitHub搜索v2", []string{"用", "git", "hub", "搜索", "v2"}},
		{"punctuation separates CJK runs", "获取新闻，列表", []string{"获取", "取新", "新闻", "列表"}},
		{"Japanese kana and kanji", "ファイル検索", []string{"ファ", "ァイ", "イル", "ル検", "検索"}},
		{"Korean", "파일 검색", []string{"파일", "검색"}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			splitWords(tt.in, func(w string) { got = append(got, w) })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("splitWords(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestSplitQueryWords(t *testing.T) {
	type word struct{ word, whole string }
	tests := []struct {
		name, in string
		want     []word
	}{
		{"a brand in camelCase", "YouTube video", []word{{"you", "youtube"}, {"tube", "youtube"}, {"video", ""}}},
		{"lower case stays whole", "github repos", []word{{"github", ""}, {"repos", ""}}},
		{"snake_case parts are words of their own", "get_file", []word{{"get", ""}, {"file", ""}}},
		{"digits or CJK: no whole word", "用GitHub v2Beta", []word{{"用", ""}, {"git", ""}, {"hub", ""}, {"v2beta", ""}}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []word
			splitQueryWords(tt.in, func(w, whole string) { got = append(got, word{w, whole}) })
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(word{})); diff != "" {
				t.Errorf("splitQueryWords(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// FuzzSplitQueryWords checks that a query's words are splitWords' words,
// in order, and that a whole word is given only for a run cut into
// several lowercase-letter parts that it joins.
func FuzzSplitQueryWords(f *testing.F) {
	for _, s := range []string{"YouTube video", "用GitHub v2Beta", "HTMLParser get_file", "ÉtéCafé", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want, got []string
		splitWords(s, func(w string) { want = append(want, w) })
		splitQueryWords(s, func(w, whole string) {
			got = append(got, w)
			if whole != "" && (!isLetters(whole) || !strings.Contains(whole, w)) {
				t.Errorf("splitQueryWords(%q): word %q has whole %q", s, w, whole)
			}
		})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("splitQueryWords(%q) words differ from splitWords (-want +got):\n%s", s, diff)
		}
	})
}
