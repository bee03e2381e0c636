package search

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestEachGloss(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string // the glosses, in order
	}{
		{"words of two characters", "推荐菜品组合", []string{"recommend recommendation", "culinary dish", "assemble combine combination association"}},
		{"longest word first", "人工智能新闻", []string{"artificial intelligence", "news"}},
		{"Latin text around and between", "获取 GitHub 天气预报 today", []string{"gain get", "weather forecast"}},
		{"punctuation splits words", "天气，预报", []string{"weather", "forecast"}},
		{"a lone character is skipped", "的", nil},
		{"characters that begin no word are skipped", "之天气", []string{"weather"}},
		{"no Chinese", "get the weather", nil},
		{"kana are not Han", "てんき", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			eachGloss(tt.text, func(g string) { got = append(got, g) })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("eachGloss(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

// FuzzEachGloss checks that segmentation never panics, stops, and only
// ever reports glosses of the dictionary for Chinese text it was given.
func FuzzEachGloss(f *testing.F) {
	for _, s := range []string{"推荐菜品组合", "获取 GitHub 天气预报", "人工智能", "\xe4\xba", "天\xff气", "𠀀天气"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := 0
		eachGloss(s, func(g string) {
			n++
			if g == "" || strings.Contains(g, "  ") || !utf8.ValidString(g) {
				t.Errorf("eachGloss(%q): gloss %q", s, g)
			}
		})
		if han := strings.IndexFunc(s, isHan) >= 0; !han && n > 0 {
			t.Errorf("eachGloss(%q): %d glosses of text without Han characters", s, n)
		}
	})
}
