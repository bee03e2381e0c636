package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// BenchmarkGenerateLocal measures one streamed call (a tool call with
// arguments in fragments, usage chunk) through the client to a modeltest
// server on loopback: the provider's own cost plus HTTP and SSE.
func BenchmarkGenerateLocal(b *testing.B) {
	srv := modeltest.NewScriptServer(b, modeltest.Script{Loop: true, NoRecord: true, Turns: []modeltest.Turn{
		{ToolCalls: []model.ToolCall{{ID: "c", Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt/user-data"}`)}}},
		{Text: "done"},
	}})
	m := newModel(b, srv.URL, nil)
	req := hello()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := model.Collect(b.Context(), m, req, nil); err != nil {
			b.Fatal(err)
		}
	}
}
