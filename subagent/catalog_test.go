package subagent_test

import (
	"sync/atomic"
	"testing"

	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/subagent"
)

// TestTasksShareTheCatalogue: with tool_search on, five tasks over the
// same MCP tools build the deferred-tool index once (the executor's
// deferred.CatalogCache), and each task's model is offered tool_search,
// not the deferred tools.
func TestTasksShareTheCatalogue(t *testing.T) {
	var builds atomic.Int32
	cache := deferred.NewCatalogCache(deferred.CatalogCacheOptions{OnBuild: func(int) { builds.Add(1) }})
	worker := answers("done")
	h := newHarness(t, baseConfig+"tool_search:\n  enabled: true\n", map[string]model.ChatModel{"worker": worker},
		func(o *subagent.Options) { o.Catalogs = cache })
	h.asm.MCP = mcpTools{serverTool("a", "one"), serverTool("a", "two"), serverTool("b", "three")}
	const tasks = 5
	for range tasks {
		var rec recorder
		if _, err := h.callTask(t.Context(), &rec, nil, `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`); err != nil {
			t.Fatal(err)
		}
	}
	if got := builds.Load(); got != 1 {
		t.Errorf("%d tasks built the index %d times, want once", tasks, got)
	}
	reqs := worker.Requests()
	if len(reqs) != 2*tasks { // each task lists the directory, then answers
		t.Fatalf("%d model requests, want %d", len(reqs), 2*tasks)
	}
	for i, req := range reqs {
		names := modeltest.ToolNames(req)
		deferredBound, search := false, false
		for _, n := range names {
			deferredBound = deferredBound || n == "a_one" || n == "b_three"
			search = search || n == deferred.ToolSearchName
		}
		if !search || deferredBound {
			t.Errorf("request %d: tools %v; want tool_search and no deferred MCP tool", i, names)
		}
	}
}
