package search

import (
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
