package deferred_test

import (
	"context"
	"testing"

	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// BenchmarkFilterModel10k is the deferred filter on one model request of a
// run that binds 20 tools and a 10,013-tool deferred catalogue with five
// tools promoted, on a thread of 100 messages: what every model call of
// such a run pays before the provider sees the request.
func BenchmarkFilterModel10k(b *testing.B) {
	tools, _ := catalog10k(b)
	c := deferred.NewCatalog(tools)
	var defs []model.ToolDefinition
	for i := range 20 {
		defs = append(defs, model.ToolDefinition{Name: "bound_" + string(rune('a'+i))})
	}
	for _, t := range tools {
		defs = append(defs, t.Definition())
	}
	names := c.Names()
	st := &thread.State{Promoted: &thread.Promoted{CatalogHash: c.Hash(), Names: names[100:105]}}
	msgs := make([]model.Message, 100)
	for i := range msgs {
		msgs[i] = model.Message{Role: model.RoleUser, Content: "a message of about a hundred characters, as a thread of real work holds them."}
	}
	h := tool.ChainModel(func(context.Context, *tool.ModelCall) (*model.Response, error) { return &model.Response{}, nil }, c.FilterModel())
	req := &model.Request{Tools: defs, Messages: msgs}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h(b.Context(), &tool.ModelCall{Request: req, State: st}); err != nil {
			b.Fatal(err)
		}
	}
}
