package main

import (
	"testing"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/tool/tooltest"
)

// The example tool keeps the contract every tool source keeps
// (docs/extending.md, "Checking a tool source with the contract suite").
func TestWordStatsContract(t *testing.T) {
	tl, err := newWordStats(t.Context(), nil, config.ToolEntry{Use: "example:word_stats"})
	if err != nil {
		t.Fatal(err)
	}
	tooltest.Run(t, []*tool.Tool{tl}, tooltest.Options{
		Samples: map[string]tooltest.Sample{
			"word_stats": {Args: []byte(`{"text": "hello world"}`), Live: true},
		},
	})
}
