package subagent_test

import (
	"context"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/subagent"
)

// BenchmarkDelegate measures the executor's overhead for one task with a
// zero-latency one-turn model: type resolution, tool assembly (cached),
// agent construction, the loop, the result contract and the events.
func BenchmarkDelegate(b *testing.B) {
	worker := modeltest.FromScript(modeltest.Script{NoRecord: true, Rules: []modeltest.Rule{{Reply: modeltest.Turn{Text: "ok"}}}})
	h := newHarness(b, baseConfig, map[string]model.ChatModel{"worker": worker}, nil)
	var rec recorder
	b.ReportAllocs()
	for b.Loop() {
		rec.events = rec.events[:0]
		if _, err := h.callTask(context.Background(), &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBatch200 runs a lead agent that delegates 200 tasks in one
// message with 64 workers (per op: the whole batch).
func BenchmarkBatch200(b *testing.B) {
	worker := modeltest.FromScript(modeltest.Script{NoRecord: true, Rules: []modeltest.Rule{{Reply: modeltest.Turn{Text: "ok"}}}})
	yaml := baseConfig + "subagents:\n  max_concurrent: 200\n  max_total_per_run: 200\n  workers: 64\n"
	h := newHarness(b, yaml, map[string]model.ChatModel{"worker": worker}, nil)
	limits := subagent.ResolveLimits(h.cfg.Subagents, 0, 0)
	b.ReportAllocs()
	for b.Loop() {
		runLead(b, h, taskCalls(200), limits)
	}
}
