package agent_test

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/deferred"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// TestFactory_catalogueBuiltOncePerToolList builds the lead agent for
// runs whose options differ (so that the assembly cache misses and each
// run gets fresh labelled copies of the MCP tools) and checks that the
// deferred catalogue's index was built once and that every run's
// tool_search searches it under the same catalogue hash.
func TestFactory_catalogueBuiltOncePerToolList(t *testing.T) {
	cfg, err := config.Parse("config.yaml", fmt.Appendf(nil, recipeConfig, "tool_search:\n  enabled: true\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	asm := &toolset.Assembler{Registry: testRegistry(), Env: &toolset.Env{Config: cfg},
		Builtins: toolset.Builtins{PresentFiles: textTool("present_files", "ok"), AskClarification: builtin.AskClarification(),
			Task: textTool("task", "done")},
		MCP: staticMCP{
			mcpTool("github", "create_issue", "Create an issue in a repository."),
			mcpTool("github", "list_pulls", "List the pull requests of a repository."),
		}}
	var builds atomic.Int32
	cache := deferred.NewCatalogCache(deferred.CatalogCacheOptions{OnBuild: func(int) { builds.Add(1) }})
	f, err := agent.NewFactory(agent.FactoryOptions{Assembler: asm, Catalogs: cache})
	if err != nil {
		t.Fatal(err)
	}
	var hash string
	for i := range 6 {
		req := agent.Request{ThreadID: "t1", UserID: "u1", RunID: fmt.Sprint("r", i), SubagentEnabled: i%2 == 0, NonInteractive: i%3 == 0}
		lead, err := f.Build(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		search, ok := lead.Tools.Lookup(deferred.ToolSearchName)
		if !ok {
			t.Fatalf("run %d: no tool_search bound", i)
		}
		if entry, _ := lead.Tools.Lookup("github_create_issue"); !entry.Deferred {
			t.Fatalf("run %d: github_create_issue is not deferred", i)
		}
		res, err := search.Tool.Handler(t.Context(), &tool.Call{Name: deferred.ToolSearchName}, json.RawMessage(`{"query":"pull requests"}`))
		if err != nil || res.Update == nil || res.Update.Promoted == nil {
			t.Fatalf("run %d: tool_search: %v, %+v", i, err, res)
		}
		if got := res.Update.Promoted.Names; len(got) == 0 || got[0] != "github_list_pulls" {
			t.Errorf("run %d: tool_search promoted %v, want github_list_pulls first", i, got)
		}
		if i == 0 {
			hash = res.Update.Promoted.CatalogHash
		} else if h := res.Update.Promoted.CatalogHash; h != hash {
			t.Errorf("run %d: catalogue hash %s, want %s", i, h, hash)
		}
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("six runs over one MCP tool list built the index %d times, want 1", n)
	}
}
