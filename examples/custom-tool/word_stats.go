package main

import (
	"context"
	"strings"
	"unicode"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

type wordStatsIn struct {
	Text string `json:"text" jsonschema:"the text to measure"`
}

type wordStatsOut struct {
	Words      int `json:"words"`
	Characters int `json:"characters"`
	Lines      int `json:"lines"`
}

// newWordStats is the factory: it may read options from the config entry
// (here: none) and returns the tool.
func newWordStats(_ context.Context, _ *toolset.Env, _ config.ToolEntry) (*tool.Tool, error) {
	return tool.New("word_stats", "Counts the words, characters and lines of a text.",
		func(ctx context.Context, c *tool.Call, in wordStatsIn) (wordStatsOut, error) {
			return wordStatsOut{
				Words:      len(strings.FieldsFunc(in.Text, unicode.IsSpace)),
				Characters: len([]rune(in.Text)),
				Lines:      strings.Count(in.Text, "\n") + 1,
			}, nil
		}), nil
}
